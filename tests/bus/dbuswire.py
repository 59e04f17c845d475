# SPDX-License-Identifier: Apache-2.0
"""A minimal D-Bus client in pure Python 3 (no python3-dbus): the wire format
(little-endian marshalling of every type), EXTERNAL authentication over a unix
socket, Hello, method calls with any signature and any values, and signals.

The bus fuzzer (flood.py) needs it where python3-dbus is not installed (the VM
guest), and the bus suite's credential checks need a connection whose process
changes its uids after authenticating, which this makes explicit: the uid sent
in AUTH EXTERNAL is os.geteuid() at connect() time, as the kernel's SO_PEERCRED
records it.

Values: y n q i u x t -> int, b -> bool, d -> float, s o g -> str, a{..} ->
dict, other arrays -> list, (..) -> tuple, v -> (signature, value).
"""

import os
import select
import socket
import struct
import time

METHOD_CALL, METHOD_RETURN, ERROR, SIGNAL = 1, 2, 3, 4
NO_REPLY_EXPECTED = 0x1

F_PATH, F_INTERFACE, F_MEMBER, F_ERROR_NAME, F_REPLY_SERIAL = 1, 2, 3, 4, 5
F_DESTINATION, F_SENDER, F_SIGNATURE = 6, 7, 8

ALIGN = {'y': 1, 'b': 4, 'n': 2, 'q': 2, 'i': 4, 'u': 4, 'x': 8, 't': 8, 'd': 8, 'h': 4,
         's': 4, 'o': 4, 'g': 1, 'a': 4, '(': 8, '{': 8, 'v': 1}
FIXED = {'y': '<B', 'n': '<h', 'q': '<H', 'i': '<i', 'u': '<I', 'x': '<q', 't': '<Q',
         'd': '<d', 'h': '<I'}


class DBusError(Exception):
    pass


def split_types(sig):
    """'sa{sv}(ii)' -> ['s', 'a{sv}', '(ii)']"""
    out, i = [], 0
    while i < len(sig):
        j = _end_of(sig, i)
        out.append(sig[i:j])
        i = j
    return out


def _end_of(sig, i):
    c = sig[i]
    if c == 'a':
        return _end_of(sig, i + 1)
    if c in '({':
        close = ')' if c == '(' else '}'
        j = i + 1
        while sig[j] != close:
            j = _end_of(sig, j)
        return j + 1
    return i + 1


class Writer:
    def __init__(self):
        self.buf = bytearray()

    def pad(self, n):
        while len(self.buf) % n:
            self.buf.append(0)

    def write(self, t, v):
        c = t[0]
        self.pad(ALIGN[c])
        if c in FIXED:
            self.buf += struct.pack(FIXED[c], v)
        elif c == 'b':
            self.buf += struct.pack('<I', 1 if v else 0)
        elif c in 'so':
            b = v.encode('utf-8', 'surrogateescape') if isinstance(v, str) else bytes(v)
            self.buf += struct.pack('<I', len(b)) + b + b'\0'
        elif c == 'g':
            b = v.encode()
            self.buf += struct.pack('<B', len(b)) + b + b'\0'
        elif c == 'v':
            sig, val = v
            self.write('g', sig)
            self.write(sig, val)
        elif c == 'a':
            elem = t[1:]
            at = len(self.buf)
            self.buf += b'\0\0\0\0'
            self.pad(ALIGN[elem[0]])
            start = len(self.buf)
            if elem[0] == '{':
                kt, vt = split_types(elem[1:-1])
                items = v.items() if isinstance(v, dict) else v
                for k, val in items:
                    self.pad(8)
                    self.write(kt, k)
                    self.write(vt, val)
            else:
                for val in v:
                    self.write(elem, val)
            struct.pack_into('<I', self.buf, at, len(self.buf) - start)
        elif c == '(':
            for st, val in zip(split_types(t[1:-1]), v):
                self.write(st, val)
        else:
            raise ValueError(f'cannot marshal type {t!r}')


class Reader:
    def __init__(self, buf, pos=0):
        self.buf = buf
        self.pos = pos

    def align(self, n):
        self.pos += (-self.pos) % n

    def read(self, t):
        c = t[0]
        self.align(ALIGN[c])
        if c in FIXED:
            (v,) = struct.unpack_from(FIXED[c], self.buf, self.pos)
            self.pos += struct.calcsize(FIXED[c])
            return v
        if c == 'b':
            (v,) = struct.unpack_from('<I', self.buf, self.pos)
            self.pos += 4
            return bool(v)
        if c in 'so':
            (n,) = struct.unpack_from('<I', self.buf, self.pos)
            v = bytes(self.buf[self.pos + 4:self.pos + 4 + n]).decode('utf-8', 'replace')
            self.pos += 4 + n + 1
            return v
        if c == 'g':
            n = self.buf[self.pos]
            v = bytes(self.buf[self.pos + 1:self.pos + 1 + n]).decode()
            self.pos += 1 + n + 1
            return v
        if c == 'v':
            sig = self.read('g')
            return (sig, self.read(sig))
        if c == 'a':
            (n,) = struct.unpack_from('<I', self.buf, self.pos)
            self.pos += 4
            elem = t[1:]
            self.align(ALIGN[elem[0]])
            end = self.pos + n
            if elem[0] == '{':
                kt, vt = split_types(elem[1:-1])
                out = {}
                while self.pos < end:
                    self.align(8)
                    k = self.read(kt)
                    out[k] = self.read(vt)
                return out
            out = []
            while self.pos < end:
                out.append(self.read(elem))
            return out
        if c == '(':
            return tuple(self.read(st) for st in split_types(t[1:-1]))
        raise ValueError(f'cannot unmarshal type {t!r}')


class Message:
    def __init__(self, mtype, flags, serial, fields, body_sig, body):
        self.type = mtype
        self.flags = flags
        self.serial = serial
        self.fields = fields
        self.signature = body_sig
        self.body = body

    path = property(lambda self: self.fields.get(F_PATH))
    interface = property(lambda self: self.fields.get(F_INTERFACE))
    member = property(lambda self: self.fields.get(F_MEMBER))
    error_name = property(lambda self: self.fields.get(F_ERROR_NAME))
    reply_serial = property(lambda self: self.fields.get(F_REPLY_SERIAL))
    sender = property(lambda self: self.fields.get(F_SENDER))

    def __repr__(self):
        return (f'Message(type={self.type}, path={self.path}, member={self.member}, '
                f'error={self.error_name}, sig={self.signature!r}, body={self.body!r})')


def marshal(mtype, serial, fields, sig, args, flags=0):
    body = Writer()
    for t, v in zip(split_types(sig), args):
        body.write(t, v)
    header = Writer()
    header.buf += struct.pack('<BBBBII', ord('l'), mtype, flags, 1, len(body.buf), serial)
    fl = []
    for code, (t, v) in fields.items():
        fl.append((code, (t, v)))
    if sig:
        fl.append((F_SIGNATURE, ('g', sig)))
    header.write('a(yv)', fl)
    header.pad(8)
    return bytes(header.buf) + bytes(body.buf)


def parse_address(address):
    """The first unix: entry of a D-Bus address (path= or abstract=)."""
    for entry in address.split(';'):
        kind, _, rest = entry.partition(':')
        if kind != 'unix':
            continue
        params = dict(p.split('=', 1) for p in rest.split(',') if '=' in p)
        if 'path' in params:
            return _unescape(params['path'])
        if 'abstract' in params:
            return '\0' + _unescape(params['abstract'])
    raise ValueError(f'no unix: path in D-Bus address {address!r}')


def _unescape(s):
    out, i = bytearray(), 0
    while i < len(s):
        if s[i] == '%':
            out.append(int(s[i + 1:i + 3], 16))
            i += 3
        else:
            out += s[i].encode()
            i += 1
    return out.decode()


def system_bus_address():
    return os.environ.get('DBUS_SYSTEM_BUS_ADDRESS',
                          'unix:path=/run/dbus/system_bus_socket')


class Connection:
    def __init__(self, address=None, timeout=30.0):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(parse_address(address or system_bus_address()))
        self.serial = 0
        self.inbuf = bytearray()
        self.signals = []
        self.pending = {}
        self._auth()
        self.unique_name = self.call('org.freedesktop.DBus', '/org/freedesktop/DBus',
                                     'org.freedesktop.DBus', 'Hello').body[0]

    def close(self):
        self.sock.close()

    def _auth(self):
        uid = str(os.geteuid()).encode().hex()
        self.sock.sendall(b'\0AUTH EXTERNAL ' + uid.encode() + b'\r\n')
        line = self._auth_line()
        if not line.startswith(b'OK'):
            raise DBusError(f'authentication refused: {line!r}')
        self.sock.sendall(b'BEGIN\r\n')

    def _auth_line(self):
        while b'\r\n' not in self.inbuf:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise DBusError('bus closed the connection during authentication')
            self.inbuf += chunk
        line, _, rest = bytes(self.inbuf).partition(b'\r\n')
        self.inbuf = bytearray(rest)
        return line

    def send(self, mtype, sig='', args=(), flags=0, **fields):
        self.serial += 1
        f = {}
        for name, code, t in (('path', F_PATH, 'o'), ('interface', F_INTERFACE, 's'),
                              ('member', F_MEMBER, 's'), ('destination', F_DESTINATION, 's'),
                              ('error_name', F_ERROR_NAME, 's'),
                              ('reply_serial', F_REPLY_SERIAL, 'u')):
            if fields.get(name) is not None:
                f[code] = (t, fields[name])
        self.sock.sendall(marshal(mtype, self.serial, f, sig, args, flags))
        return self.serial

    def call(self, destination, path, interface, member, sig='', args=(), timeout=30.0):
        """The reply (METHOD_RETURN or ERROR message); DBusError on timeout or
        a closed connection."""
        serial = self.send(METHOD_CALL, sig, args, path=path, interface=interface,
                           member=member, destination=destination)
        deadline = time.monotonic() + timeout
        while serial not in self.pending:
            self._read_one(deadline)
        return self.pending.pop(serial)

    def call_ok(self, *a, **kw):
        m = self.call(*a, **kw)
        if m.type == ERROR:
            raise DBusError(f'{m.error_name}: {m.body[0] if m.body else ""}')
        return m.body

    def add_match(self, rule):
        self.call_ok('org.freedesktop.DBus', '/org/freedesktop/DBus', 'org.freedesktop.DBus',
                     'AddMatch', 's', [rule])

    def wait_signal(self, pred, timeout):
        """The first queued or arriving signal for which pred(msg) is true
        (removed from the queue), or None after timeout seconds."""
        deadline = time.monotonic() + timeout
        while True:
            for i, m in enumerate(self.signals):
                if pred(m):
                    return self.signals.pop(i)
            try:
                self._read_one(deadline)
            except DBusError:
                return None

    def _fill(self, n, deadline):
        while len(self.inbuf) < n:
            left = deadline - time.monotonic()
            if left <= 0:
                raise DBusError('timed out waiting for the bus')
            ready, _, _ = select.select([self.sock], [], [], left)
            if not ready:
                continue
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                raise DBusError('the bus closed the connection')
            self.inbuf += chunk

    def _read_one(self, deadline):
        self._fill(16, deadline)
        endian, mtype, flags, _ver, blen, serial, flen = struct.unpack_from('<BBBBIII',
                                                                           self.inbuf, 0)
        if endian != ord('l'):
            raise DBusError('big-endian message from the bus (not supported)')
        hlen = 16 + flen
        hlen += (-hlen) % 8
        self._fill(hlen + blen, deadline)
        raw = bytes(self.inbuf[:hlen + blen])
        del self.inbuf[:hlen + blen]
        r = Reader(raw, 12)
        fields = {code: val for code, (_sig, val) in r.read('a(yv)')}
        sig = fields.get(F_SIGNATURE, '')
        body = Reader(raw[hlen:])
        args = [body.read(t) for t in split_types(sig)]
        m = Message(mtype, flags, serial, fields, sig, args)
        if mtype in (METHOD_RETURN, ERROR):
            self.pending[m.reply_serial] = m
        elif mtype == SIGNAL:
            self.signals.append(m)
            del self.signals[:-1000]  # unmatched ones must not pile up
        elif mtype == METHOD_CALL and not flags & NO_REPLY_EXPECTED:
            self.send(ERROR, 's', ['no methods here'], destination=m.sender,
                      error_name='org.freedesktop.DBus.Error.UnknownMethod', reply_serial=serial)
        return m
