"""Counting checks for the Python tests run by `make check`: each check
prints FAIL with its name when it does not hold; the test exits 1 if any
failed."""


class Checks:
    def __init__(self, name):
        self.name, self.passes, self.failures = name, 0, 0

    def check(self, what, ok):
        if ok:
            self.passes += 1
        else:
            self.failures += 1
            print("FAIL:", what)

    def summary(self):
        """Prints the counts; the exit status for the test."""
        print("%s: %d passed, %d failed" % (self.name, self.passes, self.failures))
        return 1 if self.failures else 0
