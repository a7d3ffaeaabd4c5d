// SPDX-License-Identifier: MIT
// A small CUDA library that train_loop.py drives through ctypes, as PyTorch's Python calls its
// C++ ops: ctypes releases the GIL around each call, as PyTorch does around its CUDA work. Each
// function checks its CUDA call's result, as an extension does: no call is a tail call, so each
// function is a frame of the stacks (test-python.py names them as the native frames beside the
// Python sites).
#include <cuda_runtime.h>

__global__ void pysim_step_kernel(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		x[i] = x[i] * 0.5f + 1.0f;
}

__global__ void pysim_batch_kernel(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		x[i] += 1.0f;
}

__global__ void pysim_worker_kernel(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		x[i] -= 1.0f;
}

extern "C" {

void *pysim_alloc(size_t bytes)
{
	void *p = nullptr;

	return cudaMalloc(&p, bytes) == cudaSuccess ? p : nullptr;
}

int pysim_free(void *p)
{
	return cudaFree(p) == cudaSuccess ? 0 : -1;
}

// kind 0: a training step's kernel, 1: a batch's, 2: the worker thread's
int pysim_launch(int kind, float *x, int n, int blocks)
{
	if (kind == 0)
		pysim_step_kernel<<<blocks, 128>>>(x, n);
	else if (kind == 1)
		pysim_batch_kernel<<<blocks, 128>>>(x, n);
	else
		pysim_worker_kernel<<<blocks, 128>>>(x, n);
	return cudaGetLastError() == cudaSuccess ? 0 : -1;
}

// loss.item(): one value back to the host, which waits for the GPU
float pysim_item(const float *x)
{
	float v = 0;

	cudaMemcpy(&v, x, sizeof(v), cudaMemcpyDeviceToHost);
	return v;
}

int pysim_sync(void)
{
	return cudaDeviceSynchronize() == cudaSuccess ? 0 : -1;
}

// C code that calls back into Python: a C frame between two Python frames
void pysim_each(int n, void (*callback)(int))
{
	for (int i = 0; i < n; i++)
		callback(i);
}
}
