"""The one exception type that the command line turns into a one-line message."""


class WeanError(Exception):
    """A problem with the user's input (a file, a line, an option), not a bug in wean.

    The command line prints ``error: <message>`` and exits with status 2; library callers can
    catch it. Messages name the file and, where there is one, the line.
    """
