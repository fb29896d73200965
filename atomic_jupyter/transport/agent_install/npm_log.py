"""Reading ``npm ci --loglevel=http`` as it runs: progress, a summary, and why it failed.

Sans-IO: :class:`NpmLog` is fed npm's output one line at a time and says what it means.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass

__all__ = ["CERTIFICATE_CODES", "NETWORK_CODES", "NpmFailure", "NpmLog", "Progress"]

_TARBALL = re.compile(r"^npm http fetch GET (\d{3}) \S+?/-/\S+\.tgz")
_FAILED_FETCH = re.compile(r"^npm http fetch GET (\S+) attempt \d+ failed with ([A-Z][A-Z0-9_]+)")
#: npm's error line naming the address it could not fetch.
_REQUEST = re.compile(r"\brequest to (\S+) failed\b")
_CODE = re.compile(r"^npm (?:error|ERR!) code (\S+)")
#: npm's own account of a signal that ended it ("npm error signal SIGINT").
_SIGNAL = re.compile(r"^npm (?:ERR!|error) signal (SIG[A-Z]+)$")
_ADDED = re.compile(r"^(added \d+ packages?.*)$")
_ERROR = re.compile(r"^npm (?:error|ERR!)(?: (.*))?$")
#: The parts of an npm error written for npm's developers: its JavaScript stack, the error
#: object's fields, and the errno and syscall lines.
_DETAIL = re.compile(r"^(?:\s+at |\s+\w+: |\s*[{}]$|(?:errno|syscall) \S+$)")
#: Error codes that mean the registry could not be reached.
NETWORK_CODES = frozenset(
    {"ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "ETIMEDOUT", "ECONNRESET", "EHOSTUNREACH",
     "ENETUNREACH", "ERR_SOCKET_TIMEOUT", "EPROTO"}
)  # fmt: skip
#: Error codes (Node.js's, from OpenSSL) that mean the registry's TLS certificate could not be
#: verified: most often a proxy that re-signs HTTPS traffic with an authority of its own.
CERTIFICATE_CODES = frozenset(
    {"SELF_SIGNED_CERT_IN_CHAIN", "DEPTH_ZERO_SELF_SIGNED_CERT", "UNABLE_TO_GET_ISSUER_CERT",
     "UNABLE_TO_GET_ISSUER_CERT_LOCALLY", "UNABLE_TO_VERIFY_LEAF_SIGNATURE", "CERT_UNTRUSTED",
     "CERT_HAS_EXPIRED", "CERT_NOT_YET_VALID", "CERT_SIGNATURE_FAILURE", "CERT_REJECTED",
     "ERR_TLS_CERT_ALTNAME_INVALID"}
)  # fmt: skip
#: Lines of npm's own that say nothing to a person installing the agent.
_NOISE = ("npm warn Unknown user config", "npm http fetch", "npm warn allow-scripts")


@dataclass(frozen=True)
class Progress:
    """Where an install is.

    Attributes
    ----------
    phase:
        ``"waiting"`` (for another install), ``"preparing"``, ``"downloading"``,
        ``"checking"``, ``"done"``.
    message:
        What is happening, in words.
    done, total:
        Packages fetched so far, out of how many (both 0 outside ``"downloading"``).
    """

    phase: str
    message: str
    done: int = 0
    total: int = 0

    @property
    def fraction(self) -> float:
        """How far the install is, from 0 to 1 (downloading is most of it)."""
        if self.phase == "done":
            return 1.0
        if self.phase == "checking":
            return 0.95
        if self.phase == "downloading" and self.total:
            return 0.05 + 0.85 * min(self.done, self.total) / self.total
        return 0.02 if self.phase == "preparing" else 0.0


@dataclass(frozen=True)
class NpmFailure:
    """Why ``npm ci`` failed.

    Attributes
    ----------
    kind:
        ``"registry"`` (unreachable, or its TLS certificate could not be verified),
        ``"integrity"`` (a download does not match the lock
        file), ``"lock"`` (the lock file does not match the manifest), or ``"npm"``.
    message:
        One sentence for a person, without npm's stack.
    """

    kind: str
    message: str


class NpmLog:
    """npm's output, line by line: counts the packages fetched, keeps the last lines worth
    showing, and remembers the error code and npm's summary.

    Parameters
    ----------
    total:
        How many packages the lock file installs.
    """

    def __init__(self, total: int) -> None:
        self.total = total
        self.fetched = 0
        self.code: str | None = None
        self.summary: str | None = None
        self.unreachable: str | None = None
        #: The signal npm said it ended on (``SIGINT`` for a Ctrl-C), if it did.
        self.signal: str | None = None
        self.tail: deque[str] = deque(maxlen=12)
        self._errors: list[str] = []
        self._usage = False

    def feed(self, line: str) -> Progress | None:
        """Take one line; the new progress when it moved, else None."""
        line = line.rstrip()
        if not line:
            return None
        if error := _ERROR.match(line):
            self._read_error(line, (error.group(1) or "").rstrip())
        elif not line.startswith(_NOISE):
            self.tail.append(line)
        if match := _FAILED_FETCH.match(line):
            self.unreachable = self.unreachable or match.group(1)
            return None
        if _TARBALL.match(line):
            self.fetched += 1
            return Progress(
                "downloading",
                f"downloading packages: {min(self.fetched, self.total)} of {self.total}",
                self.fetched,
                self.total,
            )
        if match := _CODE.match(line):
            self.code = self.code or match.group(1)
        if match := _SIGNAL.match(line):
            self.signal = match.group(1)
        if match := _ADDED.match(line):
            self.summary = match.group(1)
        return None

    def _read_error(self, line: str, text: str) -> None:
        """Keep an ``npm error`` line worth showing: not its stack, nor its usage help."""
        if text == "Usage:":
            # npm's help for the command: its one-line description came just before
            self._usage = True
            if self.tail and _ERROR.match(self.tail[-1]):
                dropped = self.tail.pop().split(" ", 2)[-1]
                if self._errors and self._errors[-1] == dropped:
                    self._errors.pop()
            return
        if text.startswith("A complete log"):
            self._usage = False
            self.tail.append(line)
            return
        if self._usage or not text.strip() or _DETAIL.match(text):
            return
        self.tail.append(line)
        if not text.startswith("code ") and len(self._errors) < 6:
            self._errors.append(text.strip())
        if self.unreachable is None and (request := _REQUEST.search(text)):
            self.unreachable = request.group(1)

    def failure(
        self, exit_code: int, registry: str | None = None, global_npmrc: str | None = None
    ) -> NpmFailure:
        """What went wrong, once npm exited with ``exit_code``.

        ``registry`` is named as the registry npm used, and ``global_npmrc`` as the global
        configuration file it read (a certificate failure says to put ``cafile`` there).
        """
        first = self._errors[0] if self._errors else f"npm exited with code {exit_code}"
        if self.code in CERTIFICATE_CODES:
            return NpmFailure("registry", _certificate_message(self.code, registry, global_npmrc))
        if self.code in NETWORK_CODES or (self.code is None and self.unreachable):
            where = registry or "the npm registry"
            return NpmFailure(
                "registry",
                f"could not reach {where} ({self.code or 'no answer'}). Check the network, "
                "or name a mirror with $npm_config_registry.",
            )
        if self.code == "EINTEGRITY":
            return NpmFailure(
                "integrity",
                "a downloaded package does not match the checksum in the lock file, so it "
                f"was not installed ({first.rstrip('.')}).",
            )
        if self.code in ("EUSAGE", "ELOCKVERIFY") and "sync" in " ".join(self._errors):
            causes = [e for e in self._errors if e.startswith(("Invalid: ", "Missing: "))]
            because = f" ({'; '.join(causes)})" if causes else ""
            return NpmFailure(
                "lock",
                f"the lock file does not match its package.json, so npm ci refused it{because}.",
            )
        return NpmFailure("npm", f"npm ci failed: {first}")

    def shown(self) -> str:
        """The last lines of npm's output worth showing (warnings and errors)."""
        return "\n".join(self.tail)


def _certificate_message(code: str, registry: str | None, global_npmrc: str | None) -> str:
    """A certificate failure in words: what happened, where, and the settings that fix it."""
    where = registry or "the npm registry"
    npmrc = (
        f"to the global npmrc ({global_npmrc})"
        if global_npmrc
        else "to the system npm's global npmrc (`npm config get globalconfig` names it)"
    )
    return (
        f"npm could not verify the TLS certificate of {where} ({code}). This usually means a "
        "proxy on this network re-signs HTTPS traffic with a certificate authority of its own. "
        "Give npm that authority's certificate: add `cafile=/path/to/ca.pem` to ~/.npmrc or "
        f"{npmrc}, or set NODE_EXTRA_CA_CERTS=/path/to/ca.pem in the environment "
        "(npm uses it only when no npmrc sets a cafile)."
    )
