#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes the seeds of fuzz-kineto (tests/fuzz/corpus-kineto/seed-*): small torch.profiler
traces, each about one part of the format (the mapping is doc/kineto.md's), and the smallest
real trace of tests/data/real.
usage: gen-corpus-kineto.py DIR
"""
import gzip
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REAL = os.path.join(HERE, '..', 'data', 'real', 'kineto', 'hta_a100_event_sync.json.gz')

DEV = [{'id': 0, 'name': 'GPU', 'totalGlobalMem': 85899345920, 'computeMajor': 9,
        'computeMinor': 0, 'maxThreadsPerBlock': 1024, 'maxThreadsPerMultiprocessor': 2048,
        'regsPerBlock': 65536, 'regsPerMultiprocessor': 65536, 'warpSize': 32,
        'sharedMemPerBlock': 49152, 'sharedMemPerMultiprocessor': 233472, 'numSms': 132,
        'sharedMemPerBlockOptin': 232448}]


def kernel(ts, dur, corr, name='gemm', stream=7):
    return {'ph': 'X', 'cat': 'kernel', 'name': name, 'pid': 0, 'tid': stream, 'ts': ts,
            'dur': dur, 'args': {'device': 0, 'stream': stream, 'correlation': corr,
                                 'registers per thread': 64, 'shared memory': 4096,
                                 'grid': [132, 1, 1], 'block': [128, 1, 1]}}


def call(name, ts, dur, corr, cat='cuda_runtime', tid=1):
    return {'ph': 'X', 'cat': cat, 'name': name, 'pid': 1, 'tid': tid, 'ts': ts, 'dur': dur,
            'args': {'cbid': 211, 'correlation': corr}}


def span(cat, name, ts, dur, tid=1, **args):
    return {'ph': 'X', 'cat': cat, 'name': name, 'pid': 1, 'tid': tid, 'ts': ts, 'dur': dur,
            'args': args}


def memory(ts, addr, nbytes, total, reserved):
    return {'ph': 'i', 'cat': 'cpu_instant_event', 's': 't', 'name': '[memory]', 'pid': 1,
            'tid': 1, 'ts': ts, 'args': {'Total Reserved': reserved, 'Total Allocated': total,
                                         'Bytes': nbytes, 'Addr': addr, 'Device Id': 0,
                                         'Device Type': 1}}


def doc(events, **top):
    d = {'schemaVersion': 1, 'deviceProperties': DEV, 'distributedInfo': {'rank': 0}}
    d.update(top)
    d['traceEvents'] = events
    return json.dumps(d, indent=1).encode()


def seeds():
    yield 'minimal.json', doc([call('cudaLaunchKernel', 1.5, 4.25, 10), kernel(8.125, 20, 10)])
    yield 'python.json', doc([
        span('python_function', 'train.py(87): step', 0, 500),
        span('python_function', 'torch/nn/modules/module.py(1501): _call_impl', 10, 400),
        span('python_function', '<built-in method item of Tensor object at 0x7f00>', 20, 50),
        call('cudaMemcpyAsync', 30, 20, 11), call('cudaStreamSynchronize', 51, 10, 12),
        span('cpu_op', 'aten::mm', 100, 50, tid=2), call('cuLaunchKernelEx', 110, 5, 13,
                                                         'cuda_driver', tid=2),
        {'ph': 'X', 'cat': 'gpu_memcpy', 'name': 'Memcpy DtoH (Device -> Pageable)', 'pid': 0,
         'tid': 7, 'ts': 40, 'dur': 3, 'args': {'device': 0, 'stream': 7, 'correlation': 11,
                                                'bytes': 4}},
        kernel(120, 30, 13),
        {'name': 'thread_name', 'ph': 'M', 'pid': 1, 'tid': 1, 'args': {'name': 'main'}}])
    yield 'memory.json', doc([memory(1, 4096, 512, 512, 2097152),
                              memory(2, 8192, 1024, 1536, 2097152),
                              memory(3, 4096, -512, 1024, 4194304), kernel(5, 1, 1)])
    yield 'syncs.json', doc([
        call('cudaGraphLaunch', 1, 2, 20), kernel(5, 1, 20), kernel(7, 1, 20, 'nccl_ar'),
        call('cudaMemsetAsync', 9, 1, 21),
        {'ph': 'X', 'cat': 'gpu_memset', 'name': 'Memset (Device)', 'pid': 0, 'tid': 7,
         'ts': 11, 'dur': 1, 'args': {'device': 0, 'stream': 7, 'correlation': 21,
                                      'bytes': 64}},
        call('cudaEventSynchronize', 13, 5, 22),
        {'ph': 'X', 'cat': 'cuda_sync', 'name': 'Event Sync', 'pid': 0, 'tid': -1, 'ts': 13,
         'dur': 5, 'args': {'cuda_sync_kind': 'Event Sync', 'stream': -1,
                            'wait_on_cuda_event_id': 3, 'correlation': 22, 'device': 0}}])
    yield 'relative.json', doc([kernel(1419247333430.849, 3.136, 1)],
                               baseTimeNanoseconds=1751410836000000000)
    late = json.loads(doc([kernel(1712195495505543.2, 1.28, 1)]))
    late['baseTimeNanoseconds'] = 5
    yield 'late-base.json', json.dumps(late).encode()
    yield 'legacy.json', json.dumps([
        {'ph': 'X', 'cat': 'Operator', 'name': 'aten::to', 'pid': 9, 'tid': '77', 'ts': 1,
         'dur': 20, 'args': {'Call stack': 'a.py(3): f;b.py(9): <module>'}},
        {'ph': 'X', 'cat': 'Runtime', 'name': 'cudaMemcpyAsync', 'pid': 9, 'tid': '77',
         'ts': 2, 'dur': 3, 'args': {'cbid': 41, 'correlation': 5}},
        {'ph': 'X', 'cat': 'Memcpy', 'name': 'Memcpy HtoD (Pageable -> Device)', 'pid': 0,
         'tid': 'stream 7', 'ts': 4, 'dur': 2, 'args': {'device': 0, 'correlation': 5,
                                                        'bytes': 8}},
        {'ph': 'i', 's': 't', 'name': '[memory]', 'pid': 9, 'tid': 77, 'ts': 3,
         'args': {'Device Type': 1, 'Device Id': 0, 'Bytes': -64}}]).encode()
    yield 'cut.json', doc([call('cudaLaunchKernel', 1, 1, 1), kernel(3, 1, 1)])[:-40]
    yield 'deep.json', b'{"traceEvents": [' + b'[' * 600 + b']' * 600 + b']}'
    yield 'real-event-sync.json', gzip.decompress(open(REAL, 'rb').read())


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, 'corpus-kineto')
    os.makedirs(out, exist_ok=True)
    for name, data in seeds():
        with open(os.path.join(out, 'seed-' + name), 'wb') as f:
            f.write(data)


if __name__ == '__main__':
    main()
