"""Which release of a framework is installed, read without importing it.
Standard library only, Python >= 3.9."""


def parse_version(text):
    """'0.5.10.post1' -> (0, 5, 10): the release number, suffixes aside."""
    parts = []
    for piece in text.split(".")[:3]:
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


def installed_version(distribution):
    try:
        from importlib import metadata

        return metadata.version(distribution)
    except Exception:
        return None
