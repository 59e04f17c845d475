#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# pid1-probe.py N INTERVAL DEST PATH IFACE PROP: N calls of Properties.Get
# over one D-Bus connection (no process start per call, unlike systemctl
# show, whose exec alone takes ~100 ms under TCG); prints p50 p95 max in ms.
# Standard library only: the guest has no python3-dbus. Used by
# 56-pid1-latency.sh to time PID 1's answers while memqosd throttles.
import os, socket, struct, sys, time

def pad(b, n):
    return b + b"\0" * (-len(b) % n)

def s_(v):  # string/object path body, caller aligns to 4
    e = v.encode()
    return struct.pack("<I", len(e)) + e + b"\0"

def field(buf, code, sig, val):
    buf = pad(buf, 8) + bytes([code]) + bytes([len(sig)]) + sig.encode() + b"\0"
    if sig in ("s", "o"):
        buf = pad(buf, 4) + s_(val)
    elif sig == "g":
        e = val.encode()
        buf += bytes([len(e)]) + e + b"\0"
    return buf

def message(serial, path, iface, member, dest, sig="", body=b""):
    f = b""
    f = field(f, 1, "o", path)
    f = field(f, 2, "s", iface)
    f = field(f, 3, "s", member)
    f = field(f, 6, "s", dest)
    if sig:
        f = field(f, 8, "g", sig)
    head = b"l" + bytes([1, 0, 1]) + struct.pack("<III", len(body), serial, len(f))
    return pad(head + f, 8) + body

class Bus:
    def __init__(self, addr="/run/dbus/system_bus_socket"):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.connect(addr)
        self.s.sendall(b"\0AUTH EXTERNAL " + str(os.getuid()).encode().hex().encode() + b"\r\n")
        line = self.s.recv(4096)
        if not line.startswith(b"OK"):
            raise SystemExit("probe: D-Bus auth failed: %r" % line)
        self.s.sendall(b"BEGIN\r\n")
        self.buf = b""
        self.serial = 0
        self.call("/org/freedesktop/DBus", "org.freedesktop.DBus", "Hello", "org.freedesktop.DBus")

    def read(self, n):
        while len(self.buf) < n:
            d = self.s.recv(65536)
            if not d:
                raise SystemExit("probe: the bus closed the connection")
            self.buf += d
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def call(self, path, iface, member, dest, sig="", body=b""):
        self.serial += 1
        self.s.sendall(message(self.serial, path, iface, member, dest, sig, body))
        while True:
            fixed = self.read(16)
            mtype = fixed[1]
            blen, _, flen = struct.unpack("<III", fixed[4:16])
            fields = self.read(flen + (-(16 + flen) % 8))
            self.read(blen)
            if mtype in (2, 3):
                # REPLY_SERIAL (code 5, 'u') names the call answered.
                i = 0
                reply = None
                while i < flen:
                    i += -i % 8
                    code = fields[i]; sl = fields[i + 1]; sig = fields[i + 2:i + 2 + sl].decode()
                    i += 3 + sl
                    if sig == "u":
                        i += -(16 + i) % 4
                        val = struct.unpack("<I", fields[i:i + 4])[0]; i += 4
                        if code == 5:
                            reply = val
                    elif sig in ("s", "o"):
                        i += -(16 + i) % 4
                        ln = struct.unpack("<I", fields[i:i + 4])[0]; i += 4 + ln + 1
                    elif sig == "g":
                        ln = fields[i]; i += 1 + ln + 1
                    else:
                        break
                if reply == self.serial:
                    if mtype == 3:
                        raise SystemExit("probe: %s.%s returned an error" % (iface, member))
                    return

def main():
    n, interval = int(sys.argv[1]), float(sys.argv[2])
    dest, path, iface, prop = sys.argv[3:7]
    bus = Bus(os.environ.get("PROBE_BUS", "/run/dbus/system_bus_socket"))
    body = pad(s_(iface), 4) + s_(prop)
    lat = []
    for _ in range(n):
        a = time.monotonic()
        bus.call(path, "org.freedesktop.DBus.Properties", "Get", dest, "ss", body)
        lat.append((time.monotonic() - a) * 1000)
        time.sleep(interval)
    lat.sort()
    print("%.1f %.1f %.1f" % (lat[int(len(lat) * 0.5)], lat[min(len(lat) - 1, int(len(lat) * 0.95))], lat[-1]))

main()
