"""Small servers the option tests run in this process, on 127.0.0.1, in Python threads:

- ``ForwardProxy``: an HTTP proxy (absolute-form requests) that records each request's
  line and headers and forwards it to one origin;
- ``TlsRelay``: TLS with a certificate of a throwaway CA in front of an origin;
- ``Failing``: answers every request with one error status, counting them.

They run in Python threads, so they answer only while the client's call has released the
GIL: a call that held it would hang (the tests arm a faulthandler watchdog for that).
"""

import datetime
import http.client
import ipaddress
import socket
import socketserver
import ssl
import threading
from urllib.parse import urlsplit

HOP_BY_HOP = {"connection", "proxy-connection", "keep-alive", "expect", "transfer-encoding"}


class _Threaded(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


class _Background:
    """A socketserver served from a daemon thread; a context manager that shuts it down."""

    def __init__(self, handler):
        self.server = _Threaded(("127.0.0.1", 0), handler)
        self.server.owner = self
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


def _read_head(rfile):
    line = rfile.readline(65537)
    if not line:
        return None, []
    headers = []
    while True:
        header = rfile.readline(65537)
        if header in (b"\r\n", b"\n", b""):
            break
        name, _, value = header.decode("latin-1").partition(":")
        headers.append((name.strip(), value.strip()))
    return line.decode("latin-1").rstrip("\r\n"), headers


class _ProxyHandler(socketserver.StreamRequestHandler):
    def handle(self):
        proxy = self.server.owner
        while True:
            line, headers = _read_head(self.rfile)
            if line is None:
                return
            method, url, _version = line.split(" ", 2)
            lower = {name.lower(): value for name, value in headers}
            with proxy.lock:
                proxy.requests.append((method, url, lower))
            if lower.get("expect", "").lower() == "100-continue":
                self.wfile.write(b"HTTP/1.1 100 Continue\r\n\r\n")
                self.wfile.flush()
            body = self.rfile.read(int(lower.get("content-length", "0") or 0))
            target = urlsplit(url)
            path = target.path + ("?" + target.query if target.query else "")
            origin = http.client.HTTPConnection("127.0.0.1", proxy.origin_port, timeout=60)
            origin.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
            for name, value in headers:
                if name.lower() not in HOP_BY_HOP:
                    origin.putheader(name, value)
            origin.endheaders(body)
            answer = origin.getresponse()
            data = answer.read()
            origin.close()
            out = [f"HTTP/1.1 {answer.status} {answer.reason}\r\n".encode("latin-1")]
            for name, value in answer.getheaders():
                if name.lower() not in HOP_BY_HOP and name.lower() != "content-length":
                    out.append(f"{name}: {value}\r\n".encode("latin-1"))
            length = answer.getheader("content-length") if method == "HEAD" else str(len(data))
            if length is not None:
                out.append(f"Content-Length: {length}\r\n".encode("latin-1"))
            out.append(b"\r\n")
            self.wfile.write(b"".join(out) + (b"" if method == "HEAD" else data))
            self.wfile.flush()


class ForwardProxy(_Background):
    """An HTTP forward proxy to the origin on 127.0.0.1:``origin_port``; ``requests`` holds
    ``(method, absolute URL, {lower-case header: value})`` of each request it received."""

    def __init__(self, origin_port):
        self.origin_port = origin_port
        self.requests = []
        self.lock = threading.Lock()
        super().__init__(_ProxyHandler)


class _FailingHandler(socketserver.StreamRequestHandler):
    def handle(self):
        owner = self.server.owner
        while True:
            line, headers = _read_head(self.rfile)
            if line is None:
                return
            lower = {name.lower(): value for name, value in headers}
            self.rfile.read(int(lower.get("content-length", "0") or 0))
            with owner.lock:
                owner.count += 1
            body = (
                f"<?xml version=\"1.0\"?><Error><Code>{owner.code}</Code>"
                f"<Message>try later</Message><RequestId>req-{owner.count}</RequestId></Error>"
            ).encode()
            self.wfile.write(
                f"HTTP/1.1 {owner.status} Error\r\nContent-Type: application/xml\r\n"
                f"x-amz-request-id: req-{owner.count}\r\nContent-Length: {len(body)}\r\n\r\n".encode()
                + (b"" if line.startswith("HEAD ") else body)
            )
            self.wfile.flush()


class Failing(_Background):
    """Answers every request with ``status`` and an S3 error document of ``code``;
    ``count`` is the number of requests received."""

    def __init__(self, status=503, code="SlowDown"):
        self.status = status
        self.code = code
        self.count = 0
        self.lock = threading.Lock()
        super().__init__(_FailingHandler)


class _SilentHandler(socketserver.StreamRequestHandler):
    def handle(self):
        owner = self.server.owner
        line, _ = _read_head(self.rfile)
        if line is None:
            return
        owner.received.set()
        # No answer: wait for the client to give up and close the connection.
        while self.rfile.read(1):
            pass
        owner.closed.set()


class Silent(_Background):
    """Reads a request and never answers; ``received`` is set once a request came in,
    ``closed`` once the client closed that connection."""

    def __init__(self):
        self.received = threading.Event()
        self.closed = threading.Event()
        super().__init__(_SilentHandler)


def make_ca_and_server_cert(directory):
    """A throwaway CA (``ca.pem``) and a certificate it signed for localhost and 127.0.0.1
    (``server.pem``, ``server.key``) in ``directory``; their paths."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "s3wire test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True, content_commitment=False, key_encipherment=False,
                data_encipherment=False, key_agreement=False, key_cert_sign=True,
                crl_sign=True, encipher_only=False, decipher_only=False,
            ),
            critical=True,
        )
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    paths = {name: directory / name for name in ("ca.pem", "server.pem", "server.key")}
    paths["ca.pem"].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths["server.pem"].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths["server.key"].write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return paths


def _pump(source, target):
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            target.sendall(data)
    except OSError:
        pass
    finally:
        for sock in (source, target):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class _TlsHandler(socketserver.BaseRequestHandler):
    def handle(self):
        relay = self.server.owner
        try:
            tls = relay.context.wrap_socket(self.request, server_side=True)
        except (ssl.SSLError, OSError):
            with relay.lock:
                relay.refused += 1
            return
        with relay.lock:
            relay.accepted += 1
        origin = socket.create_connection(("127.0.0.1", relay.origin_port))
        back = threading.Thread(target=_pump, args=(origin, tls), daemon=True)
        back.start()
        _pump(tls, origin)
        back.join()
        tls.close()
        origin.close()


class TlsRelay(_Background):
    """TLS on 127.0.0.1 (certificate ``cert``/``key``) relayed to the plain origin on
    ``origin_port``; ``accepted`` and ``refused`` count handshakes."""

    def __init__(self, origin_port, cert, key):
        self.origin_port = origin_port
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(str(cert), str(key))
        self.accepted = 0
        self.refused = 0
        self.lock = threading.Lock()
        super().__init__(_TlsHandler)
