"""Example target: a plain (non-dataclass) settings class resolved in __init__, a secret
flag and a token read from the environment, and a stop point reached only with --serve.

Prints the final settings as JSON (secrets masked) so the observer-effect test can compare.
"""
import argparse
import json
import os
import sys


class Settings:
    def __init__(self, args):
        self.endpoint = args.endpoint
        self.retries = args.retries
        self.verbose = args.verbose
        self.api_key = args.api_key
        self.hub_token = None
        self.mode = "auto"
        self.resolve()

    def resolve(self):
        if self.hub_token is None:
            self.hub_token = os.environ.get("HUB_TOKEN")  # a secret taken from the environment
        if self.hub_token:
            os.environ["DOWNLOAD_TOKEN"] = self.hub_token  # a secret written to the environment
        if self.mode == "auto":
            self.mode = "remote" if self.endpoint.startswith("http") else "local"
        if self.verbose and self.retries > 2:
            self.retries = 2

    def public(self):
        return {k: ("***" if k in ("api_key", "hub_token") and v else v) for k, v in vars(self).items()}


def serve(settings):
    """Where serving would begin; only called with --serve."""
    print("serving")


def main():
    parser = argparse.ArgumentParser(prog="plain_class")
    parser.add_argument("--endpoint", default="http://localhost:8000")
    parser.add_argument("--retries", type=int, default=5)
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--api-key", default=None)
    parser.add_argument("--serve", action="store_true")
    args = parser.parse_args()
    settings = Settings(args)
    print(json.dumps(settings.public(), sort_keys=True))
    if args.serve:
        serve(settings)


if __name__ == "__main__":
    main()
