# A raw gRPC Tools.Exec call whose connecting process is gone before the request is sent.
# A connects and waits until the daemon has accepted (its HTTP/2 SETTINGS arrive), forks B
# and exits; B waits until A is reaped, then sends the call and writes the reply to argv[3].
import os, socket, struct, sys, time

sock_path, command, out_path = sys.argv[1:4]

def frame(kind, flags, stream, payload):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload

def header(name, value):
    name, value = name.encode(), value.encode()
    return b"\x00" + bytes([len(name)]) + name + bytes([len(value)]) + value

def field(tag, text):
    data = text.encode()
    assert len(data) < 128
    return bytes([tag]) + bytes([len(data)]) + data

s = socket.socket(socket.AF_UNIX)
s.connect(sock_path)
s.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(4, 0, 0, b""))
def recv_exact(n):
    data = b""
    while len(data) < n:
        chunk = s.recv(n - len(data))
        if not chunk:
            sys.exit("the daemon closed the connection")
        data += chunk
    return data

first = recv_exact(9)  # the server's SETTINGS: the daemon has accepted this connection
recv_exact(int.from_bytes(first[:3], "big"))
a = os.getpid()
if os.fork() > 0:
    os._exit(0)
def alive(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            return not any(l.startswith("State:") and "Z" in l for l in f)
    except FileNotFoundError:
        return False

while alive(a):  # gone, or a zombie its parent has not reaped yet
    time.sleep(0.01)
headers = b"".join(header(k, v) for k, v in [
    (":method", "POST"), (":scheme", "http"), (":path", "/synapse.v1.Tools/Exec"),
    (":authority", "localhost"), ("content-type", "application/grpc"), ("te", "trailers")])
message = field(0x0A, "dead-peer") + field(0x12, command) + field(0x2A, os.getcwd())
body = b"\x00" + struct.pack(">I", len(message)) + message
s.sendall(frame(4, 1, 0, b"") + frame(1, 4, 1, headers) + frame(0, 1, 1, body))
s.settimeout(30)
got = b""
done = False
while not done:
    chunk = s.recv(65536)
    if not chunk:
        break
    got += chunk
    at = 0
    while at + 9 <= len(got):
        length = int.from_bytes(got[at:at + 3], "big")
        kind, flags = got[at + 3], got[at + 4]
        if kind == 1 and flags & 1:
            done = True
        at += 9 + length
with open(out_path, "wb") as f:
    f.write(got)
print("reply", len(got))
