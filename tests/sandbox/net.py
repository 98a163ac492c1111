#!/usr/bin/env python3
"""net.py - network probes for tests/cli/sandbox_escape.sh, run inside a
sluice sandbox.  Each argument is one probe; each prints one line.

  connect:HOST:PORT      a direct TCP connection: "connect:H:P OK" or the
                         errno name (ECONNREFUSED, ENETUNREACH, ...)
  connect6:HOST:PORT     the same over IPv6
  udp:HOST:PORT          a UDP datagram sent (connect + send)
  unix:NAME              connect to the abstract unix socket @NAME
  dns:NAME               getaddrinfo: "dns:N OK addr" or "dns:N EAI_..."
  get:URL                an absolute-form GET through the proxy at
                         127.0.0.1:3128: "get:URL 403 <first body line>"
  connectvia:HOST:PORT   a CONNECT through the proxy; when the proxy says
                         200 a plain GET /method goes through the tunnel
                         and its first body line is shown
  pipeline:URL1,URL2     two absolute-form GETs sent in one write on one
                         proxy connection: the status line of each answer
                         ("pipeline:... 200 403"), and the first body line
                         of the last
  ifaces                 the network interfaces ("ifaces lo")
  vsock:CID:PORT         a vsock connection (vsock ignores network
                         namespaces): "OK" or the errno name
"""
import errno
import re
import socket
import sys

PROXY = ("127.0.0.1", 3128)


def ename(e):
    return errno.errorcode.get(e.errno, str(e.errno)) if e.errno else type(e).__name__


def split_hp(s):
    host, _, port = s.rpartition(":")
    return host.strip("[]"), int(port)


def proxy_request(raw):
    s = socket.create_connection(PROXY, timeout=10)
    s.sendall(raw)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    return s, data


def status_and_rest(data):
    head, _, body = data.partition(b"\r\n\r\n")
    line = head.split(b"\r\n")[0].decode("latin-1")
    parts = line.split(" ", 2)
    code = parts[1] if len(parts) > 1 else "noreply"
    return code, body


def read_body(s, body, limit=4096):
    s.settimeout(5)
    try:
        while len(body) < limit:
            chunk = s.recv(4096)
            if not chunk:
                break
            body += chunk
    except OSError:
        pass
    return body


def first_line(body):
    text = body.decode("utf-8", "replace").strip().splitlines()
    return text[0] if text else "(empty)"


def probe(arg):
    kind, _, rest = arg.partition(":")
    try:
        if kind in ("connect", "connect6"):
            host, port = split_hp(rest)
            fam = socket.AF_INET6 if kind == "connect6" else socket.AF_INET
            s = socket.socket(fam, socket.SOCK_STREAM)
            s.settimeout(3)
            s.connect((host, port))
            s.sendall(b"GET /method HTTP/1.0\r\n\r\n")
            return "OK " + first_line(read_body(s, b"", 512))
        if kind == "udp":
            host, port = split_hp(rest)
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.connect((host, port))
            s.send(b"x")
            return "OK"
        if kind == "unix":
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(3)
            s.connect("\0" + rest)
            return "OK " + first_line(read_body(s, b"", 512))
        if kind == "dns":
            try:
                ai = socket.getaddrinfo(rest, 80, proto=socket.IPPROTO_TCP)
                return "OK " + ai[0][4][0]
            except socket.gaierror as e:
                names = {v: k for k, v in vars(socket).items() if k.startswith("EAI_")}
                return names.get(e.errno, "gaierror%d" % e.errno)
        if kind == "get":
            from urllib.parse import urlsplit
            u = urlsplit(rest)
            s, data = proxy_request(("GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n"
                                     % (rest, u.netloc)).encode())
            code, body = status_and_rest(data)
            return "%s %s" % (code, first_line(read_body(s, body)))
        if kind == "connectvia":
            s, data = proxy_request(("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n"
                                     % (rest, rest)).encode())
            code, body = status_and_rest(data)
            if code != "200":
                return "%s %s" % (code, first_line(read_body(s, body)))
            s.sendall(b"GET /method HTTP/1.0\r\n\r\n")
            _, body = status_and_rest(read_body(s, body))
            return "200 " + first_line(body)
        if kind == "vsock":
            cid, port = rest.split(":")
            s = socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM)
            s.settimeout(3)
            s.connect((int(cid), int(port)))
            return "OK"
        if kind == "pipeline":
            from urllib.parse import urlsplit
            reqs = b"".join(("GET %s HTTP/1.1\r\nHost: %s\r\n\r\n"
                             % (u, urlsplit(u).netloc)).encode() for u in rest.split(","))
            s = socket.create_connection(PROXY, timeout=10)
            s.sendall(reqs)
            data = read_body(s, b"", 1 << 16)
            codes = [c.decode() for c in re.findall(rb"HTTP/1\.[01] (\d{3}) ", data)]
            return "%s %s" % (" ".join(codes), first_line(data.rpartition(b"\r\n\r\n")[2]))
        if kind == "ifaces":
            # /proc/net/dev, not if_nameindex(): netlink is denied in a sandbox
            with open("/proc/net/dev") as f:
                return " ".join(sorted(l.split(":")[0].strip() for l in f if ":" in l))
        return "UNKNOWN"
    except OSError as e:
        return ename(e)


for a in sys.argv[1:]:
    print(a, probe(a), flush=True)
