# CPU-bound Python threads: CPython's GIL hands over with a pthread mutex and
# condition variables with timed waits (5 ms switch interval). Deterministic output.
import threading, hashlib
out = {}
def work(i):
    h = hashlib.sha256()
    s = 0
    for k in range(60000):
        s += (k * i) % 7
        if k % 1000 == 0:
            h.update(str(s).encode())
    out[i] = (s, h.hexdigest()[:16])
ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]
[t.start() for t in ts]; [t.join() for t in ts]
for i in sorted(out): print(i, *out[i])
