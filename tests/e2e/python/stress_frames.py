# SPDX-License-Identifier: MIT
"""Python frames changing under the capture: threads that recurse to random depths and raise
(frames pushed and popped all the time), threads that make CUDA calls at random depths and from
a generator (every capture walks another chain, some deeper than the 64 frames a stack keeps),
threads that exit right after a CUDA call, and a sub-interpreter that makes CUDA calls when the
version has one that can load ctypes.

usage: stress_frames.py LIBPYSIM SECONDS"""
import ctypes
import random
import sys
import threading
import time

LIB = sys.argv[1]
SECONDS = float(sys.argv[2]) if len(sys.argv) > 2 else 3.0
lib = ctypes.CDLL(LIB)
lib.pysim_alloc.restype = ctypes.c_void_p
lib.pysim_alloc.argtypes = [ctypes.c_size_t]
lib.pysim_free.argtypes = [ctypes.c_void_p]
lib.pysim_launch.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int, ctypes.c_int]
N = 1 << 12
BUF = lib.pysim_alloc(N * 4)


def deep(n, fn):
    if n:
        return deep(n - 1, fn)
    return fn()


def fail():
    raise ZeroDivisionError


def churn(stop, seed):
    """Frames pushed and popped without any CUDA call."""
    r = random.Random(seed)
    while not stop.is_set():
        try:
            deep(r.randint(0, 90), fail)
        except ZeroDivisionError:
            pass


def syncs(count):
    for _ in range(count):
        yield lib.pysim_sync()


def caller(stop, seed):
    """CUDA calls at random depths, and from a generator's frame."""
    r = random.Random(seed)
    while not stop.is_set():
        deep(r.randint(0, 90), lambda: lib.pysim_launch(2, BUF, N, 4))
        for _ in syncs(1):
            pass


def short_lived(stop):
    """Threads that end right after their CUDA call."""
    while not stop.is_set():
        t = threading.Thread(target=deep, args=(3, lib.pysim_sync))
        t.start()
        t.join()


def subinterpreter():
    """A sub-interpreter's CUDA calls, where the version has a module to run one that lets it
    load ctypes (3.11's _xxsubinterpreters; 3.12 needs a legacy one; 3.13's _interpreters)."""
    code = ('import ctypes\n'
            f'lib = ctypes.CDLL({LIB!r})\n'
            'for _ in range(20):\n'
            '    lib.pysim_sync()\n')
    for name in ('_interpreters', '_xxsubinterpreters'):
        try:
            mod = __import__(name)
        except ImportError:
            continue
        for create in (lambda: mod.create('legacy'), lambda: mod.create(isolated=False),
                       lambda: mod.create()):
            try:
                interp = create()
            except Exception:
                continue
            try:
                (mod.exec if hasattr(mod, 'exec') else mod.run_string)(interp, code)
                print(f'sub-interpreter ran ({name})')
                return
            except Exception as e:
                print(f'sub-interpreter could not run the calls ({name}: {e})')
            finally:
                try:
                    mod.destroy(interp)
                except Exception:
                    pass
            return
    print('no sub-interpreter module')


def main():
    stop = threading.Event()
    threads = [threading.Thread(target=churn, args=(stop, i)) for i in range(2)]
    threads += [threading.Thread(target=caller, args=(stop, 10 + i)) for i in range(2)]
    threads.append(threading.Thread(target=short_lived, args=(stop,)))
    for t in threads:
        t.start()
    subinterpreter()
    time.sleep(SECONDS)
    stop.set()
    for t in threads:
        t.join()
    lib.pysim_free(BUF)
    print('done')


if __name__ == '__main__':
    main()
