"""A one-line spinner on a terminal's stderr while the target runs (imports take seconds)."""


class Progress:
    def __init__(self, err, label):
        self.enabled = err.isatty()
        self.err = err
        self.label = label
        self.shown = False

    def tick(self, seconds):
        if seconds < 0.5:
            return
        frames = "|/-\\"
        self.err.write("\r%s running %s under flagtrace (%.0fs)" % (frames[int(seconds * 4) % 4], self.label, seconds))
        self.err.flush()
        self.shown = True

    def done(self):
        if self.shown:
            self.err.write("\r\033[K")
            self.err.flush()
