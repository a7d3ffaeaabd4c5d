# SPDX-License-Identifier: MIT
"""A training loop in Python that drives the GPU through libpysim.so (pysim.cu) with ctypes,
which releases the GIL around each call as PyTorch does around its CUDA work.

usage: train_loop.py LIBPYSIM [STEPS]

Each line that makes a CUDA call carries a '# site: NAME' comment: test-python.py reads them
from this file to know the file:line each of gpuwhy's sites must name. Its shape: allocations
in a helper, a generator that launches a kernel per batch, a decorated training step that
launches a kernel and reads one value back (loss.item()), a second thread that launches and
synchronizes, and a Python callback run by C code (a C frame between two Python frames)."""
import ctypes
import sys
import threading

lib = ctypes.CDLL(sys.argv[1])
lib.pysim_alloc.restype = ctypes.c_void_p
lib.pysim_alloc.argtypes = [ctypes.c_size_t]
lib.pysim_free.argtypes = [ctypes.c_void_p]
lib.pysim_launch.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int, ctypes.c_int]
lib.pysim_item.restype = ctypes.c_float
lib.pysim_item.argtypes = [ctypes.c_void_p]
CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_int)
lib.pysim_each.argtypes = [ctypes.c_int, CALLBACK]

STEPS = int(sys.argv[2]) if len(sys.argv) > 2 else 40
N = 1 << 16


def timed(fn):
    """A decorator: its wrapper is a frame between the step and the loop."""
    def wrapper(*args):
        return fn(*args)  # site: wrapper
    return wrapper


def make_buffers(count):
    bufs = []
    for _ in range(count):
        bufs.append(lib.pysim_alloc(N * 4))  # site: alloc
    return bufs


def batches(bufs, steps):
    for i in range(steps):
        buf = bufs[i % len(bufs)]
        lib.pysim_launch(1, buf, N, N // 128)  # site: batch_launch
        yield buf


@timed
def train_step(buf):
    lib.pysim_launch(0, buf, N, N // 128)  # site: step_launch
    return lib.pysim_item(buf)  # site: item


def worker(buf, launches):
    for _ in range(launches):
        lib.pysim_launch(2, buf, N, N // 128)  # site: worker_launch
    lib.pysim_sync()  # site: worker_sync


def on_each(i):
    lib.pysim_sync()  # site: callback_sync


def main():
    bufs = make_buffers(4)  # site: alloc_caller
    thread = threading.Thread(target=worker, args=(bufs[0], STEPS))
    thread.start()
    loss = 0.0
    for buf in batches(bufs, STEPS):  # site: batch_loop
        loss += train_step(buf)  # site: step_caller
    lib.pysim_each(3, CALLBACK(on_each))  # site: callback_caller
    thread.join()
    for buf in bufs:
        lib.pysim_free(buf)  # site: free
    print(f"loss {loss:.1f}")


if __name__ == '__main__':
    main()  # site: module
