# A loopback peer that accepts connections, reads the request and never
# answers (a model provider or a site that hangs); prints its port first.
import socket, threading, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0))
s.listen(16)
print(s.getsockname()[1], flush=True)
def hold(c):
    try:
        c.recv(65536)
        time.sleep(120)
    except OSError:
        pass
while True:
    c, _ = s.accept()
    threading.Thread(target=hold, args=(c,), daemon=True).start()
