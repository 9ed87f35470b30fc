"""The cues added for the misses of held-out v5 to v18, on other wordings and on look-alikes.

The real texts that motivated each cue are corpus rows (``tests/corpus/cuda_errors.jsonl``, ids
``h5-...`` to ``h10...``, each with its source). Here each cue is tried on wordings of the same failure that
the corpus does not hold, and on texts that look like it but are something else: a cue that
generalises must take the first and leave the second. ``None`` as the rule means no rule
matches (the classifier's "not recognised" fallback).
"""

from __future__ import annotations

import pytest

from hpo.failures import classify

Case = tuple[str, str, str | None]


# A bare "OOM" near GPU work, and "out-of-memory" hyphenated (h5-oom-xflux-oom-lora-title,
# h5-oom-scprinter-out-of-memory-oom-prose).
OOM: list[Case] = [
    ("OOM while training lora.", "oom", "cuda-out-of-memory"),
    ("LoRA fine-tuning OOMs on a 24GB card", "oom", "cuda-out-of-memory"),
    ("Getting OOM during inference with batch size 8", "oom", "cuda-out-of-memory"),
    ("Training SDXL on 4x A100 still gives OOM", "oom", "cuda-out-of-memory"),
    ("OOM at epoch 3, GPU RAM is 24GB", "oom", "cuda-out-of-memory"),
    ("I hit a GPU out-of-memory error with bf16", "oom", "cuda-out-of-memory"),
    ("a HIP out-of-memory (OOM) issue on MI250", "oom", "cuda-out-of-memory"),
    # The host's OOM killer, Kubernetes and the CPU side are host memory, not GPU memory.
    ("Training was killed by the OOM killer", "host_oom", "text-sigkill"),
    ("OOM killer took my training run down", "user_error", None),
    ("training pod OOMKilled by kubernetes", "user_error", None),
    ("CPU OOM while training with 64 dataloader workers", "user_error", None),
    ("Host OOM during training: the dataset is cached", "user_error", None),
    ("system OOM when preparing the training set", "user_error", None),
    ("The cgroup out-of-memory handler killed a training process", "user_error", None),
    # "OOM" inside a word, lower case, or with no GPU work named.
    ("Fine-tuning BLOOM-7b on 8 GPUs fails", "user_error", None),
    ("training stalls when the zoom room is full", "user_error", None),
    ("oom while training", "user_error", None),
    ("OOM", "user_error", None),
]

# The loss as a key with a NaN value, "loss NaN", and a trained quantity turning NaN
# (h5-num-keras-progress-loss-nan-val-loss-nan, -keras-yolo-getting-loss-nan-prose,
# -stgcnn-loss-of-nan-title, -bsrn-l-pix-becomes-nan).
NAN: list[Case] = [
    (
        "12/100 [==>...] - ETA: 40s - loss: nan - accuracy: 0.1000",
        "numerical",
        "numerical-nonfinite",
    ),
    ("Epoch 3: 50it [00:10, 4.9it/s, train_loss=nan, v_num=0]", "numerical", "numerical-nonfinite"),
    ("{'loss': nan, 'learning_rate': 1e-05, 'epoch': 0.5}", "numerical", "numerical-nonfinite"),
    ("after 20k steps I am getting loss NaN", "numerical", "numerical-nonfinite"),
    ("Loss of nan at iteration 1200", "numerical", "numerical-nonfinite"),
    ("gradients become NaN after warm-up", "numerical", "numerical-nonfinite"),
    ("l_g_gan went to nan at iter 30000", "numerical", "numerical-nonfinite"),
    ("the model weights turned into NaN with fp16", "numerical", "numerical-nonfinite"),
    # NaN in the data is the data's fault; nan as part of a name is not a NaN.
    ("The column 'price' becomes NaN after the merge", "user_error", None),
    ("the input becomes NaN after normalization", "user_error", None),
    ("loss: nanmean reduction selected", "user_error", None),
    ("loss = nan_to_num(loss)", "user_error", None),
    ("loss: NaN-safe reduction enabled", "user_error", None),
    ("the training time becomes nanoseconds per sample", "user_error", None),
    ("best_val_loss: inf (no epoch finished yet)", "user_error", None),
]

# cuda-gdb stopping a kernel on a GPU exception (h5-ccc-cuda-gdb-warp-illegal-address).
CUDA_GDB: list[Case] = [
    (
        "CUDA Exception: Warp Illegal Address",
        "cuda_context_corrupted",
        "cuda-illegal-memory-access",
    ),
    (
        "CUDA Exception: Lane Out-of-range Address",
        "cuda_context_corrupted",
        "cuda-illegal-memory-access",
    ),
    (
        'Thread 1 "python" received signal CUDA_EXCEPTION_12, Warp Assert.',
        "cuda_context_corrupted",
        "cuda-other-kernel-fault",
    ),
    (
        "CUDA Exception: Device Hardware Stack Overflow",
        "cuda_context_corrupted",
        "cuda-other-kernel-fault",
    ),
    # "CUDA exception" in prose, without cuda-gdb's Lane/Warp/Device scope, says nothing.
    ("a CUDA exception: the kernel failed somewhere", "user_error", None),
    ("Exception: CUDA exception occurred", "user_error", None),
]

# "No CUDA runtime is found" (weak) and a wrapped "Found no NVIDIA driver"
# (h5-dev-comfy3d-pip-no-runtime-no-driver, h5-dev-thinkmatch-no-cuda-runtime-found).
NO_RUNTIME: list[Case] = [
    (
        "No CUDA runtime is found, using CUDA_HOME='/usr/local/cuda-12.1'",
        "device_unavailable",
        "cuda-runtime-not-found",
    ),
    (
        "RuntimeError: Found no NVIDIA driver on your\nsystem. Please check that you have",
        "device_unavailable",
        "cuda-no-device",
    ),
    # cpp_extension prints the line whenever torch sees no GPU: stronger evidence wins.
    (
        "No CUDA runtime is found, using CUDA_HOME='/usr/local/cuda'\n"
        "AssertionError: Torch not compiled with CUDA enabled",
        "user_error",
        "user-torch-without-cuda",
    ),
    (
        "No CUDA runtime is found, using CUDA_HOME='/usr/local/cuda'\n"
        "mat1 and mat2 shapes cannot be multiplied (64x100 and 200x10)",
        "data_error",
        "data-shape-mismatch",
    ),
    ("Found no NVIDIA drivers to update", "user_error", None),
]

# The DataLoader's shared-seed timeout, with PyTorch's typo and without
# (h5-timeout-shared-seed-distributed-store-title).
STORE: list[Case] = [
    (
        "Timed out receiving the shared seed from the distribtued store on Rank 2",
        "timeout",
        "distributed-store-timeout",
    ),
    (
        "RuntimeError: Timed out receiving the shared seed from the distributed store on Rank 0."
        " (world_size=8, timeout=1800)",
        "timeout",
        "distributed-store-timeout",
    ),
    ("Timed out receiving packages from the distribution store", "user_error", None),
    ("Timed out receiving data from the distributed storage bucket", "user_error", None),
]

# A pool's exception type named alone (h5-wl-fastai-bare-title).
POOL: list[Case] = [
    ("BrokenProcessPool", "worker_lost", "pool-worker-lost"),
    ("Tokenizer fails with BrokenProcessPool on Windows", "worker_lost", "pool-worker-lost"),
    ("joblib TerminatedWorkerError in GridSearchCV", "worker_lost", "pool-worker-lost"),
    # The name inside a longer identifier, or not in its own case, is not the type.
    ("class BrokenProcessPoolGuard: pass", "user_error", None),
    ("brokenprocesspool", "user_error", None),
    # A pool that broke because its task ran out of GPU memory: the cause wins.
    (
        "BrokenProcessPool\nRuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB",
        "oom",
        "cuda-out-of-memory",
    ),
]


# ----------------------------------------------------------------------------- v6's misses
# The cues added when held-out v6 joined the training corpus (rows h6-...): TensorFlow's BFC
# allocator OOM, Dask's KilledWorker and nanny, c10d's "Wait timeout", ARCH_MISMATCH, a loss
# logged as a bracketed field, a full disk, and DataLoader's causeless "exited unexpectedly".
V6: list[Case] = [
    # TensorFlow: GPU when the device or allocator is a GPU or not named; CPU is host memory.
    (
        "ResourceExhaustedError: OOM when allocating tensor with shape[32,512,512] and type "
        "float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc",
        "oom",
        "cuda-out-of-memory",
    ),
    ("Resource exhausted: OOM when allocating tensor of shape [1024]", "oom", "cuda-out-of-memory"),
    (
        "ResourceExhaustedError: OOM when allocating tensor with shape[8,3,4096,4096] and type "
        "float on /job:localhost/replica:0/task:0/device:CPU:0 by allocator cpu",
        "host_oom",
        "host-allocator-failed",
    ),
    # A resource exhausted that is not memory stays unrecognised.
    ("ResourceExhaustedError: Quota exceeded for requests per minute", "user_error", None),
    # Dask: KilledWorker is a pool's worker; the nanny's memory report is host memory.
    (
        "distributed.scheduler.KilledWorker: Attempted to run task ('x', 0) on 3 different "
        "workers, but all those workers died while running it.",
        "worker_lost",
        "pool-worker-lost",
    ),
    (
        "distributed.nanny.memory - WARNING - Worker tcp://127.0.0.1:4001 (pid=7) exceeded 95% "
        "memory budget. Restarting...",
        "host_oom",
        "dask-nanny-memory",
    ),
    ("killedworker", "user_error", None),
    # c10d's stores.
    ("RuntimeError: Wait timeout", "timeout", "distributed-store-timeout"),
    (
        "torch.distributed.DistStoreError: Wait timeout after 300000ms",
        "timeout",
        "distributed-store-timeout",
    ),
    ("Please wait timeout is 5 s", "user_error", None),
    # A library too new for the GPU is the device's limit, like "no kernel image".
    ("RuntimeError: CUDNN_STATUS_ARCH_MISMATCH", "device_unavailable", "cuda-no-kernel-image"),
    (
        "CUBLAS_STATUS_ARCH_MISMATCH when calling cublasGemmEx",
        "device_unavailable",
        "cuda-no-kernel-image",
    ),
    # The loss as a bracketed log field.
    ("| E6 iter[ 14/ 15] | [Loss] nan | [step] 104 |", "numerical", "numerical-nonfinite"),
    ("[train_loss] = nan", "numerical", "numerical-nonfinite"),
    ("[Loss] nan-mean reduction selected", "user_error", None),
    ("[Loss] 0.4315 | [nan_count] 0", "user_error", None),
    # A full disk is not memory (the /dev/shm form is) and not the parameters' fault.
    ("OSError: [Errno 28] No space left on device", "user_error", "disk-full"),
    (
        "RuntimeError: [enforce fail at inline_container.cc:595] . unexpected pos 0 vs 0, ENOSPC",
        "user_error",
        "disk-full",
    ),
    (
        "RuntimeError: unable to write to file </torch_31_95_66>: No space left on device (28)",
        "host_oom",
        "host-shm-exhausted",
    ),
    # DataLoader's "exited unexpectedly" names no cause: retried, not PRUNED as host memory.
    (
        "RuntimeError: DataLoader worker (pid(s) 4312) exited unexpectedly",
        "worker_lost",
        "dataloader-worker-exited",
    ),
    (
        "RuntimeError: DataLoader worker (pid 4312) is killed by signal: Killed.",
        "host_oom",
        "host-memory-monitor",
    ),
]


def test_dask_killed_worker_by_type_alone() -> None:
    d = classify("distributed.scheduler.KilledWorker", "('task-0', <WorkerState 'tcp://x'>)")
    assert (d.failure_class.value, d.rule) == ("worker_lost", "pool-worker-lost")


# ----------------------------------------------------------------------------- v7's misses
# The cues added when held-out v7 (rows h7-...) joined the training corpus: GPU OOM as XLA,
# CuPy, PaddlePaddle, vLLM, thrust and xgboost print it; Windows' paging file and Arrow's
# allocator; TensorFlow's cuBLAS/cuDNN handle failures; cuSOLVER/cuRAND/cuSPARSE; NCCL calls
# that "failed:"; TCPStore and JAX barrier timeouts; a loss scale driven to the floor; NaN in
# metric tables and boosting logs; label checks of TensorFlow, xgboost, LightGBM and sklearn;
# NVML and cuInit failures; launchers' and MPI's "a child failed"; Ray Tune's and a cloud's
# stop. Each with look-alikes that must stay out (a normal loss-scale halving, "nan_to_num",
# a CUDA "unknown error" after init, a launcher line next to the child's own error).
V7: list[Case] = [
    (
        "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory allocating 1073741824 bytes.",
        "oom",
        "cuda-out-of-memory",
    ),
    (
        "cupy.cuda.memory.OutOfMemoryError: out of memory to allocate 8589934592 bytes (total 17179869184 bytes)",
        "oom",
        "cuda-out-of-memory",
    ),
    (
        "Exception in main training loop: Out of memory allocating 1,048,576 bytes (allocated so far: 9,437,184 bytes).",
        "oom",
        "cuda-out-of-memory",
    ),
    (
        "MemoryError: Unable to allocate 3.00 GiB for an array with shape (1000, 1000, 400) and data type float64",
        "host_oom",
        "host-allocator-failed",
    ),
    (
        "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization`.",
        "oom",
        "cuda-out-of-memory",
    ),
    (
        "terminate called after throwing an instance of 'thrust::system::detail::bad_alloc'\n  what():  std::bad_alloc: cudaErrorMemoryAllocation: out of memory",
        "oom",
        "cuda-out-of-memory",
    ),
    (
        "terminate called after throwing an instance of 'std::bad_alloc'\n  what():  std::bad_alloc",
        "host_oom",
        "host-allocator-failed",
    ),
    (
        "Check failed: status == CURAND_STATUS_SUCCESS (102 vs. 0)  CURAND_STATUS_ALLOCATION_FAILED",
        "oom",
        "cuda-library-alloc-failed",
    ),
    ("CUDA error: /src/tree/updater_gpu_hist.cu(812): out of memory", "oom", "cuda-out-of-memory"),
    (
        "CUDA error: an illegal memory access was encountered",
        "cuda_context_corrupted",
        "cuda-illegal-memory-access",
    ),
    (
        "ResourceExhaustedError: Out of memory error on GPU 1. Cannot allocate 2.0GB memory on GPU 1",
        "oom",
        "cuda-out-of-memory",
    ),
    (
        "OSError: [WinError 1455] The paging file is too small for this operation to complete.",
        "host_oom",
        "host-allocator-failed",
    ),
    (
        "OSError: [WinError 126] The specified module could not be found. Error loading caffe2_nvrtc.dll",
        "user_error",
        None,
    ),
    (
        "pyarrow.lib.ArrowMemoryError: realloc of size 4294967296 failed",
        "host_oom",
        "host-allocator-failed",
    ),
    (
        "numpy.core._exceptions.MemoryError: Unable to allocate 926. GiB for an array with shape (6794880, 36601)",
        "host_oom",
        "host-allocator-failed",
    ),
    (
        "numpy.core._exceptions._ArrayMemoryError: Unable to allocate array with shape (9681, 9681) and data type float64",
        "host_oom",
        "host-allocator-failed",
    ),
    (
        "tensorflow.python.framework.errors_impl.InternalError: Blas GEMM launch failed : a.shape=(8, 16), b.shape=(16, 4), m=8, n=4, k=16",
        "cublas",
        "cublas-status",
    ),
    (
        "InternalError: Blas xGEMV launch failed : a.shape=[1,4,4], x.shape=[1,4,1], m=4, n=1",
        "cublas",
        "cublas-status",
    ),
    (
        "RuntimeError: jaxlib/cusolver_kernels.cc:44: operation cusolverDnCreate(&handle) failed: cuSolver internal error",
        "cublas",
        "cuda-math-library-status",
    ),
    (
        "CURAND failure in curandGenerateNormal(gen, out, n, 0, 1)",
        "cublas",
        "cuda-math-library-status",
    ),
    (
        " ** On entry to cusparseSpMM() parameter number 1 (handle) had an illegal value: bad initialization",
        "cublas",
        "cublas-status",
    ),
    (
        "UnknownError: Failed to get convolution algorithm. This is probably because cuDNN failed to initialize",
        "cudnn",
        "cudnn-not-initialized",
    ),
    (
        "E tensorflow/stream_executor/cuda/cuda_dnn.cc:329] Could not create cudnn handle: CUDNN_STATUS_NOT_INITIALIZED",
        "cudnn",
        "cudnn-not-initialized",
    ),
    (
        "RuntimeError: cuDNN version incompatibility: PyTorch was compiled  against (8, 9, 2) but found runtime version (8, 5, 0).",
        "user_error",
        "cudnn-library-missing",
    ),
    (
        # A cuDNN of another version is user_error (convention written down after v24).
        "RuntimeError: [enforce fail at common_cudnn.h:108] cuDNN compiled (7102) and runtime (7005) versions mismatch",
        "user_error",
        "cudnn-library-missing",
    ),
    ("UnknownError: ncclCommInitRank failed: unhandled system error", "nccl", "nccl-error"),
    ("UnknownError: ncclGroupEnd failed: internal error", "nccl", "nccl-error"),
    (
        "RuntimeError: connect() timed out. Original timeout was 900000 ms.",
        "timeout",
        "distributed-store-timeout",
    ),
    (
        "XlaRuntimeError: DEADLINE_EXCEEDED: Barrier timed out. Barrier_id: PjRT_Client_Connect. Timed out task names:",
        "timeout",
        "distributed-store-timeout",
    ),
    (
        "DistBackendError: [1] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value store by key '0', but store->get('0') got error: wait timeout after 600000ms",
        "timeout",
        "distributed-store-timeout",
    ),
    (
        "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 1.0",
        "numerical",
        "numerical-nonfinite",
    ),
    (
        "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 32768.0",
        "user_error",
        None,
    ),
    (
        "[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 2, reducing to 1",
        "numerical",
        "numerical-nonfinite",
    ),
    (
        "[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536, reducing to 32768",
        "user_error",
        None,
    ),
    (
        "| WARNING: overflow detected, setting loss scale to: 0.5",
        "numerical",
        "numerical-nonfinite",
    ),
    ("| WARNING: overflow detected, setting loss scale to: 64.0", "user_error", None),
    (
        "InvalidArgumentError: LossTensor is inf or nan. : Tensor had NaN values",
        "numerical",
        "numerical-nonfinite",
    ),
    ("Found Inf or NaN global norm. : Tensor had Inf values", "numerical", "numerical-nonfinite"),
    (
        "[Epoch 3/30, Batch 10/100] [Losses: x nan, y 0.12, total nan]",
        "numerical",
        "numerical-nonfinite",
    ),
    ("loss = torch.nan_to_num(loss)", "user_error", None),
    ("Losses are averaged over nanoseconds", "user_error", None),
    (
        "      91/300        17G        nan        nan        nan          2        640",
        "numerical",
        "numerical-nonfinite",
    ),
    ("2000      [nan]         [nan]         [nan]", "numerical", "numerical-nonfinite"),
    ("[44]\ttrain-logloss:-nan\ttrain-auc:0.874943", "numerical", "numerical-nonfinite"),
    ("[44]\ttrain-logloss:0.3316\ttrain-auc:0.874943", "user_error", None),
    (
        "Epoch 1: 100%|| 15/15 [00:00<00:00, 46.04it/s, nll=nan.0]",
        "numerical",
        "numerical-nonfinite",
    ),
    ("65:\tlearn: nan\ttest: nan\tbest: 0.1 (64)", "numerical", "numerical-nonfinite"),
    ("Nan Goldin and Nan Kempner", "user_error", None),
    (
        "[03:26:03] multiclass_obj.cc:75: Check failed: label_error >= 0 && label_error < nclass SoftmaxMultiClassObj: label must be in [0, num_class), num_class=2 but found 2 in label.",
        "data_error",
        "data-target-out-of-bounds",
    ),
    (
        "InvalidArgumentError: Received a label value of 10 which is outside the valid range of [0, 10).",
        "data_error",
        "data-target-out-of-bounds",
    ),
    (
        "ValueError: Found input variables with inconsistent numbers of samples: [100, 99]",
        "data_error",
        "data-shape-mismatch",
    ),
    ("RuntimeError: expected scalar type Long but found Float", "data_error", "data-label-format"),
    ("RuntimeError: expected scalar type Float but found Double", "user_error", None),
    (
        "RuntimeError: \"nll_loss_forward_reduce_cuda_kernel_2d_index\" not implemented for 'Int'",
        "data_error",
        "data-label-format",
    ),
    (
        "RuntimeError: 0D or 1D target tensor expected, multi-target not supported",
        "data_error",
        "data-label-format",
    ),
    (
        "RuntimeError: stack expects each tensor to be equal size, but got [3, 224, 224] at entry 0 and [3, 200, 224] at entry 1",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        "ValueError: Shapes (None, 1) and (None, 5) are incompatible",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        "ValueError: y contains previously unseen labels: [7]",
        "data_error",
        "data-target-out-of-bounds",
    ),
    (
        "[LightGBM] [Fatal] Label 12 is not less than the number of label mappings (10)",
        "data_error",
        "data-target-out-of-bounds",
    ),
    (
        "nvidia-smi: Failed to initialize NVML: Driver/library version mismatch",
        "device_unavailable",
        "cuda-init-failed",
    ),
    (
        "pynvml.NVMLError_LibRmVersionMismatch: RM has detected an NVML/RM version mismatch.",
        "device_unavailable",
        "cuda-init-failed",
    ),
    (
        "E cuda_platform.cc:51] failed call to cuInit: INTERNAL: CUDA error: Failed call to cuInit: CUDA_ERROR_UNKNOWN: unknown error",
        "device_unavailable",
        "xla-cuda-init-failed",
    ),
    ("RuntimeError: CUDA error: unknown error", "cuda_context_corrupted", "cuda-unknown-error"),
    (
        "[error] Invalid CUDA device index '0' from device string \"cuda:0\", there are 0 visible CUDA devices.",
        "device_unavailable",
        "cuda-init-failed",
    ),
    (
        "W api.py:688] Received Signals.SIGHUP death signal, shutting down workers",
        "interrupted",
        "text-interrupted",
    ),
    (
        # With the Ctrl-C rule since v24, above the actor deaths the stop causes.
        "WARNING tune.py:219 -- Stop signal received (e.g. via SIGINT/Ctrl+C), ending Ray Tune run.",
        "interrupted",
        "keyboard-interrupt",
    ),
    (
        "start-worker GCP Metadata Service says termination is imminent",
        "interrupted",
        "text-interrupted",
    ),
    (
        "mpirun detected that one or more processes exited with non-zero status, thus causing\nthe job to be terminated.",
        "worker_lost",
        "child-failed",
    ),
    (
        "CHILD PROCESS FAILED WITH NO ERROR_FILE\nChild process 17057 (local_rank 0) FAILED (exitcode 1)",
        "worker_lost",
        "child-failed",
    ),
    ("Process 3 exit with status code 250.", "worker_lost", "child-failed"),
    (
        "AssertionError: Check batch related parameters. 256 != 4 * 8 * 1\nERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 9) of binary: /usr/bin/python",
        "user_error",
        None,
    ),
    (
        "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 9) of binary: /usr/bin/python",
        "worker_lost",
        "child-failed",
    ),
    (
        "RuntimeError: CUDA error: device-side assert triggered\nERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 9)",
        "cuda_context_corrupted",
        "cuda-device-side-assert",
    ),
]


def test_a_launcher_line_yields_to_the_childs_plain_error() -> None:
    """The wrapper rule only says a child failed; the child's own AssertionError says why."""
    launcher = "failed (exitcode: 1) local_rank: 0 (pid: 9) of binary: /usr/bin/python"
    alone = classify(None, launcher)
    with_error = classify("AssertionError", "train_batch_size is not equal\n" + launcher)
    assert (alone.failure_class.value, alone.rule) == ("worker_lost", "child-failed")
    assert (with_error.failure_class.value, with_error.rule) == ("user_error", None)
    assert with_error.recognised  # a plain Python error is a recognised bug


# ----------------------------------------------------------------------------- v8's misses
# The cues added when held-out v8 (rows h8-...) joined the training corpus: GPU memory as Caffe,
# thrust, RMM, pycuda, faiss, Theano, TensorRT and XLA on TPU print it; host memory as Lua
# Torch, ENOMEM, Windows' shared file mappings and Kubernetes print it; cuRAND/cuSPARSE API
# failures and THC's cuBLAS wording; cuDNN version and launch failures; NCCL operations called
# by XLA; JAX, gloo, Horovod and c10d socket timeouts; NaN in TensorFlow histograms, grad
# norms, metrics parsed from logs; label and feature checks of xgboost, CatBoost, LightGBM,
# sklearn; ROCm's page fault; devices missing in ROCm, Lightning, vLLM, Paddle, TensorFlow,
# JAX, containers; launchers and pools (Horovod, MPI, DeepSpeed, Spark, vLLM, Ray, Dask);
# SIGHUP forwarded by torchrun, spot and scheduler terminations. Each with look-alikes.
V8: list[Case] = [
    (
        "F0101 syncedmem.cpp:56] Check failed: error == cudaSuccess (2 vs. 0)  out of memory",
        "oom",
        "cuda-out-of-memory",
    ),
    (
        "F0101 common.cpp:152] Check failed: error == cudaSuccess (35 vs. 0)  CUDA driver version is insufficient for CUDA runtime version",
        "device_unavailable",
        "cuda-driver-mismatch",
    ),
    (
        "terminate called after throwing an instance of 'thrust::system::system_error'\n  what():  for_each: failed to synchronize: out of memory",
        "oom",
        "cuda-out-of-memory",
    ),
    (
        "MemoryError: std::bad_alloc: RMM failure at: pool_memory_resource.hpp:179: Maximum pool size exceeded",
        "oom",
        "cuda-out-of-memory",
    ),
    ("pycuda._driver.MemoryError: cuMemAlloc failed: out of memory", "oom", "cuda-out-of-memory"),
    (
        "Faiss assertion 'err == cudaSuccess' failed; details: Failed to cudaMalloc 1073741824 bytes",
        "oom",
        "cuda-out-of-memory",
    ),
    (
        "MemoryError: Error allocating 33554432 bytes of device memory (out of memory).",
        "oom",
        "cuda-out-of-memory",
    ),
    (
        "[E] Error[1]: [defaultAllocator.cpp::allocate::31] Error Code 1: Cuda Runtime (out of memory)",
        "oom",
        "cuda-out-of-memory",
    ),
    (
        "RuntimeError: RESOURCE_EXHAUSTED: Ran out of memory in memory space hbm. Used 9.08G of 7.48G hbm.",
        "oom",
        "cuda-out-of-memory",
    ),
    (
        "Resource exhausted: Failed to allocate request for 32.00MiB (33554432B) on device ordinal 0",
        "oom",
        "cuda-out-of-memory",
    ),
    (
        "RuntimeError: $ Torch: not enough memory: you tried to allocate 3GB. Buy new RAM!",
        "host_oom",
        "host-allocator-failed",
    ),
    ("OSError: [Errno 12] Cannot allocate memory", "host_oom", "host-allocator-failed"),
    (
        "misc/ibvwrap.cc:190 NCCL WARN Call to ibv_create_cq failed with error Cannot allocate memory",
        "nccl",
        "nccl-error",
    ),
    (
        "NCCL WARN Error: failed to extend /dev/shm/nccl-WU88OE to 9637892 bytes, error: No space left on device (28)",
        "nccl",
        "nccl-error",
    ),
    (
        "RuntimeError: unable to write to file </dev/shm/torch_1_2>: No space left on device (28)",
        "host_oom",
        "host-shm-exhausted",
    ),
    (
        "RuntimeError: DataLoader worker (pid 47) is killed by signal: Bus\nerror. It is possible that dataloader's workers are out of shared\nmemory.",
        "host_oom",
        "host-shm-exhausted",
    ),
    (
        "RuntimeError: Couldn't open shared file mapping: <torch_28076_1033928186_0>, error code: <1455>",
        "host_oom",
        "host-shm-exhausted",
    ),
    (
        "    Last State:     Terminated\n      Reason:       OOMKilled",
        "host_oom",
        "host-memory-monitor",
    ),
    ("trainer-0   0/1   OOMKilled   4 (57s ago)   2m40s", "host_oom", "host-memory-monitor"),
    (
        "The node was low on resource: memory. Container main was using 1783932Ki",
        "host_oom",
        "host-memory-monitor",
    ),
    ("OOMKilled is a Kubernetes status", "user_error", None),
    (
        "RuntimeError: cublas runtime error : the GPU program failed to execute at THCBlas.cu:450",
        "cublas",
        "cublas-execution-failed",
    ),
    (
        "Check failed: (status) == (CURAND_STATUS_SUCCESS) CURAND Gen Uniform float failed. size = 65536",
        "cublas",
        "cuda-math-library-status",
    ),
    (
        "CUSPARSE API failed at line 162 with error: initialization error (1)",
        "cublas",
        "cuda-math-library-status",
    ),
    (
        # A cuDNN of another version is user_error (convention written down after v24).
        "E cuda_dnn.cc:378] Loaded runtime CuDNN library: 8.4.0 but source was compiled with: 8.6.0.",
        "user_error",
        "cudnn-library-missing",
    ),
    (
        "InternalError: cuDNN launch failure : input shape([1,3,933,613]) filter shape([7,7,3,64])",
        "cudnn",
        "cudnn-status",
    ),
    ("UNIMPLEMENTED: DNN library is not found.", "user_error", "cudnn-library-missing"),
    (
        "RuntimeError: UNKNOWN: Failed to determine best cudnn convolution algorithm: INTERNAL: All algorithms tried",
        "cudnn",
        "cudnn-no-engine",
    ),
    (
        "RuntimeError: Internal: nccl_all_reduce_thunk.cc:162: NCCL operation ncclAllReduce(send_buffer, recv_buffer, n, dt, op, comm, stream) failed: invalid usage",
        "nccl",
        "nccl-error",
    ),
    (
        "NCCL operation ncclGetUniqueId(&id) failed: Unable to load NCCL library. Multi-GPU collectives will not work.",
        "user_error",
        "user-nccl-not-built",
    ),
    (
        "bootstrap.cc:131 NCCL WARN Bootstrap Root : rank 1 of 8 ranks has already checked in",
        "nccl",
        "nccl-error",
    ),
    (
        "jaxlib._jax.XlaRuntimeError: DEADLINE_EXCEEDED: Barrier timed out.",
        "timeout",
        "distributed-store-timeout",
    ),
    (
        "what():  http_store.cc:57 Wait timeout after 30 seconds for key(s): 0.",
        "timeout",
        "distributed-store-timeout",
    ),
    (
        "Exception: Timed out waiting for tasks to start. Please check connectivity between servers.",
        "timeout",
        "distributed-store-timeout",
    ),
    (
        "[c10d] waitForInput: socket SocketImpl(fd=79, addr=[localhost]:41170, remote=[localhost]:29500) timed out after 1800000ms",
        "timeout",
        "distributed-store-timeout",
    ),
    (
        "ray.exceptions.GetTimeoutError: Get timed out: some object(s) not ready.",
        "timeout",
        "distributed-time-limit",
    ),
    (
        "InvalidArgumentError: Nan in summary histogram for: conv2d/kernel_0 [Op:WriteHistogramSummary]",
        "numerical",
        "numerical-nonfinite",
    ),
    (
        "AssertionError: Rank 11: found NaN in local grad norm in backward pass before data-parallel communication collective.",
        "numerical",
        "numerical-nonfinite",
    ),
    (
        "WARNING: The grad norm is nan. Skipping updating the model.",
        "numerical",
        "numerical-nonfinite",
    ),
    ("WARNING: The grad norm is 0.53. Clipping.", "user_error", None),
    (
        "ValueError: autodetected range of [nan, nan] is not finite",
        "numerical",
        "numerical-nonfinite",
    ),
    ("RuntimeError: range of [0.0, 5.0] is not finite", "user_error", None),
    (
        "ValueError: could not convert string to float: '-nan(ind)'",
        "numerical",
        "numerical-nonfinite",
    ),
    # Not a NaN: a string in numeric data (a data error since v10's sklearn row).
    (
        "ValueError: could not convert string to float: 'nano'",
        "data_error",
        "data-label-format",
    ),
    (
        'java.lang.NumberFormatException: For input string: "-nan"',
        "numerical",
        "numerical-nonfinite",
    ),
    (
        "CatBoostError: json.cpp:259: JSON writer: invalid float value: nan",
        "numerical",
        "numerical-nonfinite",
    ),
    ("               Value function loss: inf", "numerical", "numerical-nonfinite"),
    ("               Value function loss: 0.0213", "user_error", None),
    (
        "I0315 net.cpp:630]     [Backward] Layer relu3_3, param blob 0 diff: nan",
        "numerical",
        "numerical-nonfinite",
    ),
    (
        "layers.py:234: RuntimeWarning: overflow encountered in exp\n  exp = np.exp(x)\nlayers.py:235: RuntimeWarning: invalid value encountered in true_divide",
        "numerical",
        "numerical-numpy-warnings",
    ),
    (
        "layers.py:234: RuntimeWarning: overflow encountered in exp\n  exp = np.exp(x)",
        "user_error",
        None,
    ),
    (
        "FutureWarning: Non-finite norm encountered in torch.nn.utils.clip_grad_norm_; continuing anyway.",
        "numerical",
        "numerical-nonfinite",
    ),
    (
        # A library's finiteness check is numerical (the labelling conventions, since v10).
        "XGBoostError: data.cc:514: Check failed: valid: Label contains NaN, infinity or a value too large.",
        "numerical",
        "numerical-nonfinite",
    ),
    (
        "ValueError: Invalid classes inferred from unique values of `y`.  Expected: [0 1 2], got [0 2 3]",
        "data_error",
        "data-label-format",
    ),
    (
        "ValueError: The number of classes has to be greater than one; got 1",
        "data_error",
        "data-label-format",
    ),
    (
        "CatBoostError: target_converter.cpp:392: NaN values are not supported for target",
        "data_error",
        "data-label-format",
    ),
    (
        "LightGBMError: The number of features in data (875) is not the same as it was in training data (1914).",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        "RuntimeError: Class values must be smaller than num_classes.",
        "data_error",
        "data-target-out-of-bounds",
    ),
    (
        "ValueError: expected sequence of length 27 at dim 1 (got 26)",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        "ValueError: cannot copy sequence with size 19 to array axis with dimension 18",
        "data_error",
        "data-shape-mismatch",
    ),
    # sklearn's newer wording of the same check as the older one below: the same class.
    ("ValueError: Input X contains NaN.", "numerical", "numerical-nonfinite"),
    (
        "ValueError: Input contains NaN, infinity or a value too large for dtype('float64').",
        "numerical",
        "numerical-nonfinite",
    ),
    (
        "RuntimeError: index out of range: Tried to access index 100 out of table with 99",
        "data_error",
        "data-index-out-of-range",
    ),
    (
        "failing expression was y<output_tensor.k()\ny:6  output_tensor.k():6",
        "data_error",
        "data-target-out-of-bounds",
    ),
    (
        "Memory access fault by GPU node-2 (Agent handle: 0x55fea5592860) on address 0x7fc133800000.",
        "cuda_context_corrupted",
        "cuda-illegal-memory-access",
    ),
    (
        'ScatterGatherKernel.cu], thread: [60,0:115,0] Assertion `idx_dim >= 0 && idx_dim < index_size && "index out of bounds",0,0` failed.',
        "cuda_context_corrupted",
        "cuda-device-side-assert",
    ),
    ("RuntimeError: No HIP GPUs are available", "device_unavailable", "cuda-no-device"),
    (
        "ggml_cuda_init: failed to initialize ROCm: no ROCm-capable device is detected",
        "device_unavailable",
        "cuda-no-device",
    ),
    (
        "MisconfigurationException: You requested GPUs: [0, 1]\n(pid=15) But your machine only has: [0]",
        "device_unavailable",
        "cuda-no-device",
    ),
    (
        "MisconfigurationException: GPUAccelerator can not run on your system since the accelerator is not available.",
        "device_unavailable",
        "cuda-no-device",
    ),
    ("RuntimeError: No supported device detected.", "device_unavailable", "cuda-no-device"),
    (
        "Found an unknown error - this may be due to an incorrectly set up environment. I will set the available devices to be zero.",
        "device_unavailable",
        "device-fallback-warning",
    ),
    (
        "nvidia-container-cli: initialization error: nvml error: driver not loaded: unknown.",
        "device_unavailable",
        "cuda-init-failed",
    ),
    (
        "CUDA SETUP: WARNING! libcuda.so not found! Do you have a CUDA driver installed?",
        "device_unavailable",
        "device-fallback-warning",
    ),
    (
        "[-1 ]call to cuInit results in UNKNOWN_CUDA_ERROR",
        "device_unavailable",
        "xla-cuda-init-failed",
    ),
    ("Met Exceptions:\nNo OpenCL device found", "device_unavailable", "cuda-no-device"),
    (
        "W init.cc:182] Compiled with WITH_GPU, but no GPU found in runtime.",
        "device_unavailable",
        "device-fallback-warning",
    ),
    (
        "Cannot dlopen some GPU libraries.\nSkipping registering GPU devices...",
        "device_unavailable",
        "device-fallback-warning",
    ),
    (
        "RuntimeError: Backend 'cuda' failed to initialize: Unable to use CUDA because of the following issues",
        "device_unavailable",
        "xla-cuda-init-failed",
    ),
    (
        "CUDA backend failed to initialize: Unable to load CUDA.",
        "device_unavailable",
        "xla-cuda-init-failed",
    ),
    ("cudaGetDeviceCount failed initialization error", "device_unavailable", "cuda-init-failed"),
    (
        "RuntimeError: Horovod detected that one or more processes exited with non-zero status, thus causing the job to be terminated.",
        "worker_lost",
        "child-failed",
    ),
    (
        "Primary job  terminated normally, but 1 process returned\na non-zero exit code.",
        "worker_lost",
        "child-failed",
    ),
    ("[launch.py:131:sigkill_handler] Killing subprocess 2273", "worker_lost", "child-failed"),
    (
        "Caused by: org.apache.spark.SparkException: Python worker exited unexpectedly (crashed)",
        "worker_lost",
        "pool-worker-lost",
    ),
    (
        "ERROR [multiproc_executor.py:140] Worker proc VllmWorker-1 died unexpectedly, shutting down executor.",
        "worker_lost",
        "pool-worker-lost",
    ),
    (
        "ray.worker.RayTaskError: Invalid return value: likely worker died or was killed while executing the task",
        "worker_lost",
        "pool-worker-lost",
    ),
    ("distributed.nanny - WARNING - Restarting worker", "worker_lost", "pool-worker-lost"),
    (
        "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 102241 closing signal SIGHUP",
        "interrupted",
        "text-interrupted",
    ),
    (
        "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 102241 closing signal SIGTERM",
        "user_error",
        None,
    ),
    ("CRITICAL Keyboard Interrupt. Ending early.", "interrupted", "text-interrupted"),
    (
        'Spot interruption payload received: {"action":"terminate"}',
        "interrupted",
        "text-interrupted",
    ),
    ("Trial 1311 (Experiment 1192) was requested to terminate", "interrupted", "text-interrupted"),
    (
        "RuntimeError: Distributed package doesn't have NCCL built in\nfailed (exitcode: 1) local_rank: 0 (pid: 1) of binary:",
        "user_error",
        "user-nccl-not-built",
    ),
]


def test_a_start_up_device_warning_yields_to_the_failure_named_after_it() -> None:
    """TensorFlow, Paddle and bitsandbytes warn that they found no GPU and go on on the CPU."""
    warning = "Cannot dlopen some GPU libraries.\nSkipping registering GPU devices...\n"
    alone = classify(None, warning)
    shapes = classify(
        "ValueError", warning + "ValueError: Shapes (None, 1) and (None, 5) are incompatible"
    )
    assert (alone.failure_class.value, alone.rule) == (
        "device_unavailable",
        "device-fallback-warning",
    )
    assert (shapes.failure_class.value, shapes.rule) == ("data_error", "data-shape-mismatch")


# The misses of held-out v9 (ids h9-...): XLA on TPU, Keras and TensorFlow shape checks, Arrow,
# Ray's older worker-death wording, submitit and PBS preemption, cuSPARSE/cuSOLVER/hipBLAS,
# JAX's DNN initialisation, and C assert()s.
V9: list[Case] = [
    # XLA on TPU: every memory space is device memory; the OOM report's allocation listing.
    (
        "RuntimeError: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in memory space smem. Used 1.2M of 1.0M smem.",
        "oom",
        "cuda-out-of-memory",
    ),
    ("Exceeded vmem capacity by 4.00M.", "oom", "cuda-out-of-memory"),
    (
        "jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED: E1002: CompileTimeHbmOom: Ran out",
        "oom",
        "cuda-out-of-memory",
    ),
    (
        "Resource exhausted: Attempting to allocate 1.50G. That was not possible. There are 1.02G free.",
        "oom",
        "cuda-out-of-memory",
    ),
    (
        "     XLA label: %fusion.12 = f32[64,1024]{1,0} fusion(...)\n     Allocation type: HLO temp",
        "oom",
        "cuda-out-of-memory",
    ),
    # Not a memory space, not an allocation listing.
    ("the memory space vmem is 16M on v4 chips", "user_error", None),
    ("Allocation type: dynamic", "user_error", None),
    ("RESOURCE_EXHAUSTED: Quota exceeded for quota metric 'Requests'", "user_error", None),
    # HIP in TensorFlow, Vulkan, HIP/CUDA check macros.
    (
        "failed to allocate 2.00GiB (2147483648 bytes) from device: HIP_ERROR_OutOfMemory",
        "oom",
        "cuda-out-of-memory",
    ),
    ("vk::Device::allocateMemory: ErrorOutOfDeviceMemory", "oom", "cuda-out-of-memory"),
    ("VkResult VK_ERROR_OUT_OF_DEVICE_MEMORY", "oom", "cuda-out-of-memory"),
    ("error: out of memory (2) at /src/clients/common/init.cpp:54", "oom", "cuda-out-of-memory"),
    ("VK_ERROR_OUT_OF_HOST_MEMORY", "user_error", None),
    ("error: invalid argument (1) at /src/clients/common/init.cpp:54", "user_error", None),
    # ROCm's GPU page fault in every form; UBSan's host-side misaligned access is not CUDA.
    (
        "Memory access fault by GPU on address 0x7f001000",
        "cuda_context_corrupted",
        "cuda-illegal-memory-access",
    ),
    (
        "Memory access fault by GPU node-<x> (Agent handle: 0x1) on address 0x0. Reason: Page not present",
        "cuda_context_corrupted",
        "cuda-illegal-memory-access",
    ),
    (
        "CUDA error: misaligned address\nCompile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
        "cuda_context_corrupted",
        "cuda-misaligned-address",
    ),
    (
        "src/io.cpp:12:3: runtime error: load of misaligned address 0x01 for type 'int'",
        "user_error",
        None,
    ),
    ("runtime error: store to misaligned address 0x7f for type 'double'", "user_error", None),
    (
        "runtime error: member access within misaligned address 0x55 for type 'struct S'",
        "user_error",
        None,
    ),
    # cuDNN through cudnn-frontend, XLA, Windows DLLs and Caffe's checks.
    (
        "cudnnGraphNotSupportedError: No valid engine configs for ConvFwd_",
        "cudnn",
        "cudnn-no-engine",
    ),
    (
        "XlaRuntimeError: FAILED_PRECONDITION: DNN library initialization failed.",
        "cudnn",
        "cudnn-not-initialized",
    ),
    (
        "Could not load dynamic library 'cudnn64_8.dll'; dlerror: cudnn64_8.dll not found",
        "user_error",
        "cudnn-library-missing",
    ),
    (
        "Could not locate cudnn_ops_infer64_8.dll. Please make sure it is in your library path!",
        "user_error",
        "cudnn-library-missing",
    ),
    ("Check failed: status == CUDNN_STATUS_SUCCESS (4 vs. 0)", "cudnn", "cudnn-status"),
    ("The cudnn64_8.dll in this folder is the one we ship", "user_error", None),
    # hipBLAS statuses; cuSPARSE and cuSOLVER failures in their own words.
    ("RuntimeError: CUDA error: HIPBLAS_STATUS_NOT_SUPPORTED", "cublas", "cublas-status"),
    ("hipBLASLt error: HIPBLASLT_STATUS_INVALID_VALUE", "cublas", "cublas-status"),
    (
        "operation cusolverDnDgetrf(handle, n, n, a, n, w, p, info) failed: cuSolver execution failed",
        "cublas",
        "cuda-math-library-status",
    ),
    (
        "RuntimeError: CUDA error: invalid argument when calling `cusparseSpMM(handle, opA, opB, &alpha, A, B, &beta, C)`",
        "cublas",
        "cuda-math-library-status",
    ),
    (
        "CUSOLVER ERROR (code = 6, execution failed) at dense.c:80",
        "cublas",
        "cuda-math-library-status",
    ),
    (
        "Internal CUFFT failure with error code 5 (internal error) in file fft.cu at line 9",
        "cublas",
        "cuda-math-library-status",
    ),
    # A sticky fault named while cuSPARSE ran stays the sticky fault.
    (
        "RuntimeError: CUDA error: an illegal memory access was encountered when calling `cusparseSpMM(handle)`",
        "cuda_context_corrupted",
        "cuda-illegal-memory-access",
    ),
    ("the cusparse error handling was rewritten in 12.1", "user_error", None),
    # NCCL: bootstrap and socket warnings, TensorFlow's NCCL ops, NVLS, BytePS, Neuron.
    ("NCCL WARN Bootstrap : no socket interface found", "nccl", "nccl-error"),
    (
        "misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 10.0.0.2<4242> failed",
        "nccl",
        "nccl-error",
    ),
    (
        "W op_kernel.cc:1655] OP_REQUIRES failed at nccl_ops.cc:104 : Unknown: Error invoking NCCL: invalid usage",
        "nccl",
        "nccl-error",
    ),
    (
        "  (0) Internal:  internal error\n [[node replica_1/NcclAllReduce_3 (defined at train.py:9) ]]",
        "nccl",
        "nccl-error",
    ),
    ("BaseCollectiveExecutor::StartAbort Internal: unhandled system error", "nccl", "nccl-error"),
    (
        "Failed to bind NVLink SHARP (NVLS) Multicast memory of size 4194304 : CUDA error 401",
        "nccl",
        "nccl-error",
    ),
    ("F byteps/common/nccl_manager.cc:35] Check failed: e == cudaSuccess", "nccl", "nccl-error"),
    ("ERROR NRT:nrt_load_collectives failed to create global communicator", "nccl", "nccl-error"),
    ("NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>", "user_error", None),
    # An OOM inside an NCCL op is an OOM.
    (
        "ResourceExhaustedError: OOM when allocating tensor with shape[1024,1024] on /job:localhost/device:GPU:0\n [[node NcclAllReduce_1]]",
        "oom",
        "cuda-out-of-memory",
    ),
    # Ray's memory monitor, JAX's coordination heartbeat.
    (
        "(raylet) see https://docs.ray.io/en/latest/ray-core/scheduling/ray-oom-prevention.html",
        "host_oom",
        "host-memory-monitor",
    ),
    (
        "UNAVAILABLE: Task /job:jax_worker/replica:0/task:3 heartbeat timeout. This indicates that the remote task has failed",
        "timeout",
        "distributed-store-timeout",
    ),
    ("the heartbeat timeout is configurable with --heartbeat_timeout", "user_error", None),
    # Preemption by submitit, PBS and a Slurm requeue.
    (
        "submitit WARNING - Caught signal SIGUSR2 on node12: this job is preempted.",
        "interrupted",
        "text-interrupted",
    ),
    (
        "slurmstepd: error: *** JOB 42 ON n1 CANCELLED AT 2022-01-01T00:00:00 DUE TO JOB REQUEUE ***",
        "interrupted",
        "text-interrupted",
    ),
    ("job preempted", "interrupted", "text-interrupted"),
    ("My job preempted other jobs on the queue because of its priority", "user_error", None),
    # NaN from JAX's checkify and darknet's loss line.
    (
        "FloatingPointError: nan generated by primitive log at model.py:12 (loss)",
        "numerical",
        "numerical-nonfinite",
    ),
    (" 1200: -nan, -nan avg loss, 0.001 rate, 3.1 seconds", "numerical", "numerical-nonfinite"),
    (" 1200: 2.41, 2.73 avg loss, 0.001 rate, 3.1 seconds", "user_error", None),
    # Labels the model cannot take.
    (
        "xgboost.core.XGBoostError: SoftmaxMultiClassObj: label exceed num_class",
        "data_error",
        "data-target-out-of-bounds",
    ),
    (
        'CatBoostError: target_converter.cpp:226: Unknown class label: "7"',
        "data_error",
        "data-target-out-of-bounds",
    ),
    (
        'CatBoostError: Missing values like "nan" are not supported for target',
        "data_error",
        "data-label-format",
    ),
    # Relabelled with v15: a metric given predictions in another form is the code's error.
    (
        "ValueError: Classification metrics can't handle a mix of multiclass and continuous-multioutput targets",
        "user_error",
        "user-metric-inputs",
    ),
    (
        "ValueError: You are passing a target array of shape (600, 1) while using as loss `categorical_crossentropy`.",
        "data_error",
        "data-label-format",
    ),
    (
        "pyarrow.lib.ArrowInvalid: Could not convert '1.5' with type str: tried to convert to double",
        "data_error",
        "data-label-format",
    ),
    (
        "pyarrow.lib.ArrowInvalid: Column 2 named labels expected length 16 but got length 8",
        "data_error",
        "data-label-format",
    ),
    (
        "ValueError: Encountered text corresponding to disallowed special token '<|im_start|>'.",
        "data_error",
        "data-label-format",
    ),
    ("tiktoken: disallowed_special defaults to 'all'", "user_error", None),
    # Indexing and shapes, in numpy, Keras, TensorFlow, Theano, Paddle, JAX, spaCy, vLLM.
    (
        "IndexError: index 10 is out of bounds for axis 1 with size 10",
        "data_error",
        "data-index-out-of-range",
    ),
    (
        "IndexError: boolean index did not match indexed array along dimension 0; dimension is 5",
        "data_error",
        "data-index-out-of-range",
    ),
    (
        "IndexError: Dimension out of range (expected to be in range of [-2, 1], but got 2)",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        'ValueError: Input 0 of layer "conv2d" is incompatible with the layer: expected min_ndim=4, found ndim=3.',
        "data_error",
        "data-shape-mismatch",
    ),
    (
        "InvalidArgumentError: Matrix size-incompatible: In[0]: [32,10], In[1]: [20,5] [Op:MatMul]",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        "InvalidArgumentError: Incompatible shapes: [32,10] vs. [32,5] [Op:AddV2]",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        "InvalidArgumentError: Input to reshape is a tensor with 100 values, but the requested shape has 64",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        "InvalidArgumentError: ConcatOp : Dimensions of inputs should match: shape[0] = [1,2] vs. shape[1] = [3,2]",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        "Assign requires shapes of both tensors to match. lhs shape= [10] rhs shape= [5]",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        "ValueError: Can't convert non-rectangular Python sequence to Tensor.",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        "ValueError: Input dimension mis-match. (input[0].shape[1] = 4, input[1].shape[1] = 3)",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        "ValueError: (InvalidArgument) Broadcast dimension mismatch. Operands could not be broadcast together with the shape of X = [4] and the shape of Y = [5].",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        "ValueError: Input shapes do not match the polymorphic shapes specification.",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        "ValueError: [E088] Text of length 2000001 exceeds maximum of 1000000.",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        "ValueError: the decoder prompt contains a(n) image item with length 9000, which exceeds the pre-allocated encoder cache size 8192.",
        "data_error",
        "data-shape-mismatch",
    ),
    ("Incompatible shapes are reported by the model summary", "user_error", None),
    ("ValueError: Input 0 of layer dense is missing a name", "user_error", None),
    # Start-up warnings of an unusable GPU are weak: a failure named later wins.
    (
        "INFO:jax._src.xla_bridge:Unable to initialize backend 'cuda': jaxlib was built without CUDA",
        "device_unavailable",
        "device-fallback-warning",
    ),
    (
        "UserWarning: Found GPU0 NVIDIA GB10 which is of cuda capability 12.1.\n    Minimum and Maximum cuda capability supported by this version of PyTorch is\n    (8.0) - (12.0)",
        "device_unavailable",
        "device-fallback-warning",
    ),
    (
        "INFO:jax._src.xla_bridge:Unable to initialize backend 'cuda':\nTypeError: unsupported operand type(s) for +: 'int' and 'str'",
        "user_error",
        None,
    ),
    (
        "CUDA error: the provided PTX was compiled with an\nunsupported toolchain.",
        "device_unavailable",
        "cuda-no-kernel-image",
    ),
    # Ray's older worker-death wording, Paddle's reader, srun and subprocess exits.
    (
        "WARNING worker.py:1037 -- A worker died or was killed while executing task ffff01.",
        "worker_lost",
        "pool-worker-lost",
    ),
    ("Task failed: IOError: sent task to dead actor", "worker_lost", "pool-worker-lost"),
    (
        "SystemError: (Fatal) Blocking queue is killed because the data reader raises an exception.",
        "worker_lost",
        "dataloader-worker-exited",
    ),
    ("srun: error: node7: tasks 0-3: Exited with exit code 2", "worker_lost", "child-failed"),
    (
        "RuntimeError: Failed to run: ['docker', 'run', 'img'], Process exited with code: 125",
        "worker_lost",
        "child-failed",
    ),
    ("srun: error: node7: task 0: Exited with exit code 0", "user_error", None),
    (
        "ValueError: bad config\nsrun: error: node7: task 0: Exited with exit code 1",
        "user_error",
        None,
    ),
    # A C assert() aborts the process; a CUDA kernel's assert is the sticky device-side assert.
    (
        'python: Triton.cpp:42: void f(): Assertion `layout && "mma"\' failed.',
        "segfault",
        "text-crash",
    ),
    (
        "/pytorch/aten/src/ATen/native/cuda/Loss.cu:240: nll_loss_forward_reduce_cuda_kernel_2d: block: [0,0,0], thread: [5,0,0] Assertion `t >= 0 && t < n_classes` failed.",
        "cuda_context_corrupted",
        "cuda-device-side-assert",
    ),
    ("AssertionError: Assertion `x > 0' failed in my test", "user_error", None),
]


# The misses of held-out v10 (ids h10...): TensorRT, Metal and CatBoost GPU memory, the JVM and R
# out of memory, scheduler wall-clock limits, sklearn/ONNX Runtime/Keras shape and label checks,
# linear algebra on non-finite matrices, Windows access violations, nnU-Net and pytest-xdist
# workers, and the Megatron progress line that a NaN cue took for a NaN loss.
V10: list[Case] = [
    # GPU memory in TensorRT, Metal, CatBoost, ManagedCuda, spconv, RMM, OpenCL, accelerate.
    (
        "[TRT] Requested amount of GPU memory (1073741824 bytes) could not be allocated. There may not be enough free memory",
        "oom",
        "cuda-out-of-memory",
    ),
    (
        "[TRT] [E] 2: [virtualMemoryBuffer.cpp::resizePhysical::140] Error Code 2: OutOfMemory (no further information)",
        "oom",
        "cuda-out-of-memory",
    ),
    (
        "[E] [TRT] safeRuntime.cpp (25) - Cuda Error in nvinfer1::internal::DefaultAllocator::allocate: 2 (out of memory)",
        "oom",
        "cuda-out-of-memory",
    ),
    (
        "error: Insufficient Memory (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)",
        "oom",
        "cuda-out-of-memory",
    ),
    (
        "(NCudaLib::TOutOfMemoryError) stack_like_memory_pool.h:303: Error: Out of memory. Requested 77 MB",
        "oom",
        "cuda-out-of-memory",
    ),
    (
        "ManagedCuda.CudaException: ErrorOutOfMemory: The API call failed",
        "oom",
        "cuda-out-of-memory",
    ),
    (
        "MemoryError: std::bad_alloc: out_of_memory: CUDA error at: rmm/mr/device/pool_memory_resource.hpp",
        "oom",
        "cuda-out-of-memory",
    ),
    ("what():  Memory Object Allocation Failure", "oom", "cuda-out-of-memory"),
    ("RuntimeError: No executable batch size found, reached zero.", "oom", "cuda-out-of-memory"),
    (
        "BFCArena::AllocateRawInternal(size_t, bool) Failed to allocate memory for requested buffer of size 2147483648",
        "oom",
        "cuda-out-of-memory",
    ),
    # Host memory: a std::bad_alloc alone, the lower-case "errorOutOfMemory" is not the enum.
    ("MemoryError: std::bad_alloc", "host_oom", "host-allocator-failed"),
    ("handle errorOutOfMemory in the callback", "user_error", None),
    # Host memory: JVM, R, LLVM, pandas, macOS, OpenCL's host, Colab, LSF.
    ("java.lang.OutOfMemoryError: GC overhead limit exceeded", "host_oom", "cpu-device-oom"),
    ("java.lang.OutOfMemoryError: Metaspace", "user_error", None),
    ("Error: cannot allocate vector of size 812.3 Mb", "host_oom", "host-allocator-failed"),
    ("LLVM ERROR: out of memory\nAborted (core dumped)", "host_oom", "host-allocator-failed"),
    (
        "pandas.errors.ParserError: Error tokenizing data. C error: out of memory",
        "host_oom",
        "host-allocator-failed",
    ),
    (
        "python(1,0x1) malloc: *** mach_vm_map(size=1048576) failed (error code=3)\n*** error: can't allocate region",
        "host_oom",
        "host-allocator-failed",
    ),
    ("LightGBMError: Out of Host Memory", "host_oom", "host-allocator-failed"),
    ("Your session crashed after using all available RAM.", "host_oom", "host-memory-monitor"),
    (
        "TERM_MEMLIMIT: job killed after reaching LSF memory usage limit.\nExited with exit code 143.",
        "host_oom",
        "host-memory-monitor",
    ),
    # cuDNN: version mismatch (an installation problem since v20, see the conventions), MXNet's
    # checks, XLA's unknown status, Windows DLLs.
    (
        "RuntimeError: cuDNN version mismatch: PyTorch was compiled against 8200 but linked against 8100",
        "user_error",
        "cudnn-library-missing",
    ),
    (
        "src/operator/nn/cudnn/cudnn_convolution-inl.h:155: Check failed: (cudnnConvolutionBackwardData(s->dnn_handle_)",
        "cudnn",
        "cudnn-status",
    ),
    ("UNKNOWN: <unknown cudnn status: 5003>", "cudnn", "cudnn-status"),
    (
        "Could not locate cudnn_ops64_9.dll. Please make sure it is in your library path!",
        "user_error",
        "cudnn-library-missing",
    ),
    (
        'OSError: [WinError 126] The specified module could not be found. Error loading\n"C:\\venv\\lib\\site-packages\\torch\\lib\\cudnn_adv_infer64_8.dll" or one of its dependencies.',
        "user_error",
        "cudnn-library-missing",
    ),
    (
        'OSError: [WinError 126] The specified module could not be found. Error loading "C:\\torch\\lib\\c10.dll"',
        "user_error",
        None,
    ),
    # cuBLAS and cuSOLVER as other libraries word them.
    ("RuntimeError: Failed to create cublas handle.", "cublas", "cublas-not-initialized"),
    (
        "RuntimeError: check_cublas_: CUBLAS Error: an internal operation failed",
        "cublas",
        "cublas-status",
    ),
    (
        "cuBLAS error 13 at ggml-cuda.cu:1226: the function failed to launch on the GPU",
        "cublas",
        "cublas-status",
    ),
    ("Exception: cublasLt ran into an error!", "cublas", "cublas-status"),
    (
        "Status Message: CUBLAS error executing cublasGemmHelper( cublas_handle, N, N)",
        "cublas",
        "cublas-status",
    ),
    (
        "Execution of replica 0 failed: INTERNAL: cublasLtMatmul(handle, desc) failed",
        "cublas",
        "cublas-status",
    ),
    ("RuntimeError: cuSolver has not been initialized", "cublas", "cuda-math-library-status"),
    # The miner's wording of cudaErrorIllegalAddress; not a variable named like it.
    (
        "Critical error in main cuda loop ErrorIllegalAddress: While executing a kernel",
        "cuda_context_corrupted",
        "cuda-illegal-memory-access",
    ),
    ("if (status == errorillegaladdress) return;", "user_error", None),
    # Devices: Docker without the GPU runtime, TensorRT's CUDA init, NVRM, NVML, MIG, Paddle.
    (
        'docker: Error response from daemon: could not select device driver "nvidia" with capabilities: [[gpu]].',
        "device_unavailable",
        "cuda-no-device",
    ),
    (
        "[W] [TRT] CUDA initialization failure with error: 100. Please check your CUDA installation",
        "device_unavailable",
        "cuda-init-failed",
    ),
    (
        "ERROR: Cuda initialization failure with error 35. Please check cuda installation\nSegmentation fault (core dumped)",
        "device_unavailable",
        "cuda-init-failed",
    ),
    ("NVRM: Xid: GPU lost from the bus [NV_ERR_GPU_IS_LOST]", "device_unavailable", "gpu-lost"),
    (
        "Failed to initialize NVML: could not load NVML library",
        "device_unavailable",
        "cuda-no-device",
    ),
    (
        "MisconfigurationException: No supported gpu backend found!",
        "device_unavailable",
        "cuda-no-device",
    ),
    ("RuntimeError: Failed to infer device type", "device_unavailable", "cuda-no-device"),
    ("Unable to start CUDA Context", "device_unavailable", "cuda-init-failed"),
    (
        "ExternalError: CUDA error(999), unknown error.\n  [at paddle/fluid/platform/gpu_info.cc:108]",
        "device_unavailable",
        "xla-cuda-init-failed",
    ),
    # CUDA's unknown error elsewhere stays the sticky unknown error.
    (
        "ExternalError: CUDA error(999), unknown error.\n  [at paddle/fluid/operators/conv_op.cu:42]",
        "cuda_context_corrupted",
        "code:cudaErrorUnknown",
    ),
    ("No GPU/TPU found, falling back to CPU.", "device_unavailable", "device-fallback-warning"),
    (
        "No GPU/TPU found, falling back to CPU.\nValueError: too many values to unpack",
        "user_error",
        None,
    ),
    # NCCL through Caffe's check.
    ("Check failed: result == ncclSuccess (2 vs. 0)  unhandled system error", "nccl", "nccl-error"),
    # Wall-clock limits of schedulers, MPI, CI; Gloo and JAX peers.
    ("=>> PBS: job killed: walltime 3610 exceeded limit 3600", "timeout", "distributed-time-limit"),
    (
        "TERM_RUNLIMIT: job killed after reaching LSF run time limit.\nExited with exit code 140.",
        "timeout",
        "distributed-time-limit",
    ),
    ("MOAB_INFO:  job exceeded wallclock limit", "timeout", "distributed-time-limit"),
    (
        "Not retrying job due to wall clock limit (job automatically killed on the worker node)",
        "timeout",
        "distributed-time-limit",
    ),
    (
        "Please check your code and/or\nadjust/remove the job execution time limit (as specified by --timeout",
        "timeout",
        "distributed-time-limit",
    ),
    (
        "The job running on runner GitHub Actions 2 has exceeded the maximum execution time of 60 minutes.",
        "timeout",
        "distributed-time-limit",
    ),
    (
        "RuntimeError: Process 1 terminated or timed out after 60.0 seconds",
        "timeout",
        "distributed-time-limit",
    ),
    (
        "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] Timed out waiting 1800000ms for recv/send operation to complete",
        "timeout",
        "distributed-time-limit",
    ),
    (
        "RuntimeError: Gloo connectFullMesh failed with [pair.h:301] Connect timeout [none]",
        "timeout",
        "distributed-store-timeout",
    ),
    ("the walltime limit is 24 hours on this queue", "user_error", None),
    # Preemption: AWS Batch, Julia.
    ('"StatusReason": "Host EC2 (instance i-0abc) terminated."', "interrupted", "text-interrupted"),
    ("ERROR: InterruptException:", "interrupted", "text-interrupted"),
    # Numerical: linear algebra, distributions, NaN tensors, framework checks; Megatron's log.
    (
        "numpy.linalg.LinAlgError: Matrix is not positive definite",
        "numerical",
        "numerical-nonfinite",
    ),
    (
        "LinAlgError: 3-th leading minor of the array is not positive definite",
        "numerical",
        "numerical-nonfinite",
    ),
    ("ValueError: array must not contain infs or NaNs", "numerical", "numerical-nonfinite"),
    (
        "gpytorch.utils.errors.NotPSDError: Matrix not positive definite after repeatedly adding jitter",
        "numerical",
        "numerical-nonfinite",
    ),
    ("ValueError: The parameter probs has invalid values", "numerical", "numerical-nonfinite"),
    (
        "tensor([[nan, nan, nan,  ..., nan, nan, nan],\n        [nan, nan, nan,  ..., nan, nan, nan]])",
        "numerical",
        "numerical-nonfinite",
    ),
    ("tensor([[0.1, 0.2, 0.3,  ..., 0.4, 0.5, 0.6]])", "user_error", None),
    (
        "modules.devices.NansException: A tensor with all NaNs was produced in VAE.",
        "numerical",
        "numerical-nonfinite",
    ),
    (
        "RuntimeError: NaNs encountered when trying to perform matrix-vector multiplication",
        "numerical",
        "numerical-nonfinite",
    ),
    (
        "InvalidArgumentError: Tensor had NaN values\n [[{{node CheckNumerics}}]]",
        "numerical",
        "numerical-nonfinite",
    ),
    (
        "RuntimeError: NaN is detected on backward computation of LinearFunction",
        "numerical",
        "numerical-nonfinite",
    ),
    ("Loss is not finite. Terminate training.", "numerical", "numerical-nonfinite"),
    (
        "AssertionError: Box regression deltas become infinite or NaN!",
        "numerical",
        "numerical-nonfinite",
    ),
    ("ValueError: rgb network grad is INF, 1", "numerical", "numerical-nonfinite"),
    ("ValueError: Input y contains NaN.", "numerical", "numerical-nonfinite"),
    (
        " iteration 100/ 1000 | lm loss: 3.899E+01 | loss scale: 1024.0 | number of skipped iterations: 0 | number of nan iterations: 0 |",
        "user_error",
        None,
    ),
    (" iteration 100/ 1000 | lm loss: nan | loss scale: 1.0 |", "numerical", "numerical-nonfinite"),
    # Data: labels, features, shapes as sklearn, xgboost, LightGBM, CatBoost, ONNX Runtime,
    # Keras, JAX, MXNet and Paddle check them.
    (
        "XGBoostError: label must be in [0,1] for logistic regression",
        "data_error",
        "data-target-out-of-bounds",
    ),
    ("Met Exceptions:\nLabel excel 12", "data_error", "data-target-out-of-bounds"),
    ("ValueError: Unknown label type: 'continuous'", "data_error", "data-label-format"),
    ("ValueError: Unknown label type: 'unknown'", "data_error", "data-label-format"),
    (
        'CatBoostError: Target value "yes" cannot be parsed as float',
        "data_error",
        "data-label-format",
    ),
    (
        "ValueError: Failed to convert a NumPy array to a Tensor (Unsupported object type list).",
        "data_error",
        "data-label-format",
    ),
    ("ValueError: too many dimensions 'str'", "data_error", "data-label-format"),
    (
        "pyarrow.lib.ArrowInvalid: Column 1: In chunk 0: Invalid: Length spanned by list offsets",
        "data_error",
        "data-label-format",
    ),
    (
        "ValueError: [E024] Could not find an optimal move to supervise the parser.",
        "data_error",
        "data-label-format",
    ),
    (
        "INVALID_ARGUMENT : Got invalid dimensions for input: input for the following indices\n index: 1 Got: 3 Expected: 1",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        "ValueError: X has 10 features, but StandardScaler is expecting 12 features as input.",
        "data_error",
        "data-shape-mismatch",
    ),
    ("ValueError: X has 17 features per sample; expecting 15", "data_error", "data-shape-mismatch"),
    (
        "ValueError: X has a different shape than during fitting.",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        "ValueError: feature_names mismatch: ['a', 'b'] ['a', 'c']",
        "data_error",
        "data-shape-mismatch",
    ),
    ("LightGBMError: Wrong size of feature_names", "data_error", "data-shape-mismatch"),
    (
        "ValueError: Error when checking input: expected dense_input to have shape (4,) but got array with shape (5,)",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        "ValueError: Error when checking target: expected dense_2 to have 2 dimensions",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        "ValueError: Input 0 is incompatible with layer lstm_1: expected ndim=3, found ndim=2",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        "TypeError: dot_general requires contracting dimensions to have the same shape, got (3,) and (4,).",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        "mxnet.base.MXNetError: Shape inconsistent, Provided = [10,20], inferred shape=(10,30)",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        "RuntimeError: only batches of spatial targets supported (3D tensors) but got targets of dimension: 4",
        "data_error",
        "data-shape-mismatch",
    ),
    ("X has a few more features than the paper describes", "user_error", None),
    # Crashes: Windows access violations, Fatal Python errors, an access violation exit status.
    (
        "Windows fatal exception: access violation\n\nThread 0x1 (most recent call first):",
        "segfault",
        "faulthandler-access-violation",
    ),
    # faulthandler also reports violations that were handled: a Python error decides.
    (
        "Windows fatal exception: access violation\n\nValueError: bad learning rate",
        "user_error",
        None,
    ),
    (
        "Unhandled exception at 0x00007FF8 in python.exe: 0xC0000005: Access violation reading location",
        "segfault",
        "text-crash",
    ),
    ("Fatal Python error: PyThreadState_Get: no current thread", "segfault", "text-crash"),
    (
        "subprocess.CalledProcessError: Command '['python', 'train.py']' returned non-zero exit status 3221225477.",
        "segfault",
        "text-crash",
    ),
    ("Fatal Python error is what the docs call it", "user_error", None),
    # Workers: nnU-Net, pytest-xdist, Dask, Paddle, Ray's xgboost actors, YARN containers.
    (
        "RuntimeError: One or more background workers are no longer alive. Exiting.",
        "worker_lost",
        "pool-worker-lost",
    ),
    (
        "RuntimeError: Some background workers are no longer alive",
        "worker_lost",
        "pool-worker-lost",
    ),
    (
        "[gw3] node down: Not properly terminated\nreplacing crashed worker gw3",
        "worker_lost",
        "pool-worker-lost",
    ),
    ("distributed.scheduler - ERROR - Lost all workers", "worker_lost", "pool-worker-lost"),
    (
        "RuntimeError: DataLoader 2 workers exit unexpectedly, pids: 11, 12",
        "worker_lost",
        "dataloader-worker-exited",
    ),
    (
        "INFO elastic.py:155 -- Actor status: 0 alive, 2 dead (2 total)",
        "worker_lost",
        "pool-worker-lost",
    ),
    ("INFO elastic.py:155 -- Actor status: 2 alive, 0 dead (2 total)", "user_error", None),
    (
        "Diagnostics: Exception from container-launch.\nContainer id: container_1\nExit code: 137",
        "worker_lost",
        "child-failed",
    ),
    # From the review of these cues: the rarer wordings, and look-alikes they must leave alone.
    (
        "rmm::out_of_memory: CUDA error at: pool_memory_resource.hpp:196",
        "oom",
        "cuda-out-of-memory",
    ),
    ("clCreateBuffer returned CL_MEM_OBJECT_ALLOCATION_FAILURE", "oom", "cuda-out-of-memory"),
    ("OpenCL error: CL_OUT_OF_HOST_MEMORY", "host_oom", "host-allocator-failed"),
    (
        "src/f.cpp:3:5: runtime error: member call on misaligned address 0x55d0 for type 'Foo'",
        "user_error",
        None,
    ),
    ("runtime error: downcast of misaligned address 0x55d0 for type 'Bar'", "user_error", None),
    (
        "TypeError: unsupported operand\nFatal Python error: _enter_buffered_busy: could not acquire lock for <_io.BufferedWriter name='<stderr>'> at interpreter shutdown",
        "user_error",
        None,
    ),
    (
        "Fatal Python error: init_fs_encoding: failed to get the Python codec of the filesystem encoding",
        "user_error",
        None,
    ),
    ("#SBATCH --requeue  # if this job is preempted, it will be requeued", "user_error", None),
    # JAX's CPU-fallback warning is below a crash or a signal named in the same text.
    (
        "WARNING:absl:No GPU/TPU found, falling back to CPU.\nSegmentation fault (core dumped)",
        "segfault",
        "text-crash",
    ),
]


# The misses of held-out v11 (ids h11...): Paddle's GPU allocator check, ONNX Runtime's arena on
# the CPU, MSVC's bad_alloc text, Kubernetes' pod status, TensorRT's "Cuda failure: 700" (not
# NCCL's wording), TensorFlow's CudnnRNN, THC's and DyNet's cuBLAS failures, Paddle's and
# Caffe2's NCCL wrappers, JAX batch dimensions, CatBoost targets and ids, unreadable images, float
# overflow, PyMC's start point, a loss scaler at zero, and macOS/zsh crash lines.
V11: list[Case] = [
    # GPU memory: Paddle's allocator check; thrust's bad_alloc naming CUDA stays GPU memory.
    (
        "paddle.fluid.core_avx.EnforceNotMet: enforce allocating <= available failed, 2147483648 > 1048576000\n at [/paddle/paddle/fluid/platform/gpu_info.cc:216]",
        "oom",
        "cuda-out-of-memory",
    ),
    (
        "terminate called after throwing an instance of 'thrust::system::detail::bad_alloc'\n  what():  std::bad_alloc: cudaErrorMemoryAllocation: out of memory",
        "oom",
        "cuda-out-of-memory",
    ),
    # Host memory: MSVC's bad_alloc text, Kubernetes' pod status, Dask's memory_limit.
    ("[LightGBM] [Fatal] bad allocation", "host_oom", "host-allocator-failed"),
    (
        "trainer-7d9f8c6b5-x2kqz   0/1     OOMKilled   3          5m",
        "host_oom",
        "host-memory-monitor",
    ),
    (
        "    Last State:     Terminated\n      Reason:       OOMKilled\n      Exit Code:    137",
        "host_oom",
        "host-memory-monitor",
    ),
    (
        "distributed.scheduler - ERROR - Task 'x-123' has 5.20 GiB worth of input dependencies, but worker tcp://10.0.0.3:4000 has memory_limit set to 4.00 GiB.",
        "host_oom",
        "host-memory-monitor",
    ),
    # ONNX Runtime's arena: an NCHWc node runs on the CPU; any other node may be on the GPU.
    (
        "Non-zero status code returned while running Conv node. Name:'conv1_nchwc' Status Message: bfc_arena.cc:342 onnxruntime::BFCArena::AllocateRawInternal Failed to allocate memory for requested buffer of size 1048576",
        "host_oom",
        "cpu-device-oom",
    ),
    (
        "Non-zero status code returned while running Conv node. Name:'conv1' Status Message: bfc_arena.cc:342 onnxruntime::BFCArena::AllocateRawInternal Failed to allocate memory for requested buffer of size 1048576",
        "oom",
        "cuda-out-of-memory",
    ),
    # TensorRT's "Cuda failure: 700" is not NCCL's "Cuda failure 700 '...'".
    (
        "Error Code 1: Cuda Runtime (an illegal memory access was encountered) Cuda failure: 700",
        "cuda_context_corrupted",
        "cuda-illegal-memory-access",
    ),
    (
        "misc/strongstream.cc:395 NCCL WARN Cuda failure 700 'an illegal memory access was encountered'",
        "nccl",
        "nccl-sticky-cuda-failure",
    ),
    (
        "Last error:\nCuda failure 'an illegal memory access was encountered'",
        "nccl",
        "nccl-sticky-cuda-failure",
    ),
    # TensorFlow's CudnnRNN.
    (
        "tensorflow.python.framework.errors_impl.UnknownError: Fail to find the dnn implementation. [Op:CudnnRNN]",
        "cudnn",
        "cudnn-status",
    ),
    # THC's and DyNet's cuBLAS failures; status 13 is EXECUTION_FAILED (sticky).
    (
        "RuntimeError: cublas runtime error : library not initialized at /pytorch/aten/src/THC/THCGeneral.cpp:250",
        "cublas",
        "cublas-status",
    ),
    (
        "RuntimeError: cublas runtime error : the GPU program failed to execute at /pytorch/aten/src/THC/THCBlas.cu:116",
        "cublas",
        "cublas-execution-failed",
    ),
    (
        "CUBLAS failure in cublasSgemm(dev.cublas_handle, CUBLAS_OP_N, CUBLAS_OP_T, y.d.rows(), y.d.cols(), l.d.cols(), kSCALAR_ONE, l.v, l.d.rows(), r.v, r.d.rows(), acc_scalar, y.v, y.d.rows())\n14",
        "cublas",
        "cublas-status",
    ),
    (
        "CUBLAS failure in cublasSgemv(dev.cublas_handle, CUBLAS_OP_N, x.d.rows(), x.d.cols(), kSCALAR_ONE, x.v, x.d.rows(), y.v, 1, kSCALAR_ZERO, z.v, 1)\n13\n",
        "cublas",
        "cublas-execution-failed",
    ),
    # NCCL failures reported by Paddle's and Caffe2's wrappers.
    (
        "paddle.fluid.core_avx.EnforceNotMet: system error at [/paddle/paddle/fluid/platform/nccl_helper.h:107]",
        "nccl",
        "nccl-error",
    ),
    (
        "[enforce fail at cuda_nccl_gpu.cc:41] status == ncclSuccess. 5 vs 0.  Error at: caffe2/contrib/nccl/cuda_nccl_gpu.cc41: invalid usage",
        "nccl",
        "nccl-error",
    ),
    (
        "RuntimeError: Tensors must be CUDA and dense\nException raised from check_gpu_single_tensor at ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1006 (most recent call first):",
        "user_error",
        None,
    ),
    # Data: JAX batch dimensions, CatBoost targets and ids, unreadable images.
    (
        "TypeError: dot_general requires lhs batch dimensions and rhs batch dimensions to have the same shape, got (8,) and (4,).",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        '_catboost.CatBoostError: catboost/private/libs/target/target_converter.cpp:32: Missing values like "NaN" are not supported for target',
        "data_error",
        "data-label-format",
    ),
    (
        "_catboost.CatBoostError: catboost/private/libs/target/target_converter.cpp:629: Target Labels for MultiLogloss must be 0 or 1",
        "data_error",
        "data-label-format",
    ),
    ("_catboost.CatBoostError: bad object for id: 1.5", "data_error", "data-label-format"),
    ("OSError: image file is truncated (3 bytes not processed)", "data_error", "data-label-format"),
    (
        "PIL.UnidentifiedImageError: cannot identify image file 'data/train/cat.1234.jpg'",
        "data_error",
        "data-label-format",
    ),
    (
        "FileNotFoundError: [Errno 2] No such file or directory: 'data/train/cat.1234.jpg'",
        "user_error",
        None,
    ),
    # Numerical: float overflow in math, a sampler refusing NaN, PyMC's start point, a loss
    # scaler divided by its own zero scale.
    ("OverflowError: math range error", "numerical", "numerical-nonfinite"),
    # (Since v27: the float power's errno 34 alone is not divergence; v27's wrong prune was a
    # temperature schedule's power. Only after exp() on the line above: table v27.)
    ("OverflowError: (34, 'Numerical result out of range')", "user_error", None),
    ("OverflowError: Python int too large to convert to C long", "user_error", None),
    ("ValueError: `inf` is invalid value.", "numerical", "numerical-nonfinite"),
    (
        "pymc.exceptions.SamplingError: Initial evaluation of model at starting point failed!",
        "numerical",
        "numerical-nonfinite",
    ),
    (
        '  File "/opt/conda/lib/python3.8/site-packages/apex/amp/scaler.py", line 38, in unscale\n    1. / scale)\nZeroDivisionError: float division by zero',
        "numerical",
        "numerical-nonfinite",
    ),
    (
        '  File "train.py", line 10, in evaluate\n    acc = correct / total\nZeroDivisionError: float division by zero',
        "user_error",
        None,
    ),
    # Crashes named by an IDE's exit line (macOS numbering) and by zsh's job lines.
    (
        "Process finished with exit code 138 (interrupted by signal 10: SIGBUS)",
        "segfault",
        "text-crash",
    ),
    ("zsh: illegal hardware instruction  python train.py", "segfault", "text-crash"),
    ("[1]    4939 bus error  python demo_network.py", "segfault", "text-crash"),
    ("zsh: abort      python train.py", "segfault", "text-crash"),
    (
        "Process finished with exit code 130 (interrupted by signal 2: SIGINT)",
        "interrupted",
        "text-interrupted",
    ),
]


# The misses of the half of held-out v12 that joined the training rows (ids h12..., the other
# half stays held out): legacy CUDA code 77 and the kernel log's Xid, cuBLAS statuses in glog
# CHECKs and Julia, Knet's library errors, Torque and pynisher limits, Paddle/Caffe/Caffe2/
# Torch7/MXNet/TensorFlow/DL4J/sklearn label and shape checks, CatBoost, Chainer and libsndfile
# inputs, DL4J/xgboost/Theano non-finite logs, GPUs too old for Triton/rocBLAS/TensorRT,
# TensorFlow 1's ops on the CPU, Ray/PBS/pynisher memory limits, ggml's CUDA_CHECK, Spark
# executors and Ray nodes lost.
V12: list[Case] = [
    # Kernel faults named by a bare legacy code or by the kernel log's Xid.
    (
        "Faiss assertion 'err__ == cudaSuccess' failed in ~DeviceTensor() at DeviceTensor-inl.cuh:61; details: CUDA error 77\nAborted (core dumped)",
        "cuda_context_corrupted",
        "cuda-illegal-memory-access",
    ),
    (
        "NVRM: Xid (PCI:0000:3b:00): 13, pid=2211, Graphics SM Warp Exception on (GPC 0, TPC 1, SM 0): Out Of Range Address",
        "cuda_context_corrupted",
        "cuda-other-kernel-fault",
    ),
    (
        "[ 812.3] NVRM: Xid (PCI:0000:db:00): 31, pid=13641, Ch 00000008, intr 00000000. MMU Fault: ENGINE GRAPHICS",
        "cuda_context_corrupted",
        "cuda-other-kernel-fault",
    ),
    (
        "NVRM: Xid (PCI:0000:01:00): 79, pid=1234, GPU has fallen off the bus.",
        "device_unavailable",
        "gpu-lost",
    ),
    ("CUDA error 770 at kernel.cu:12", "user_error", None),
    # cuBLAS statuses as glog CHECKs, Julia and Knet print them; 13 is sticky, 3 is memory.
    (
        "F0127 math_functions.cpp:45] Check failed: (cublasSgemm_v2(Caffe::cublas_handle(), ...)) == CUBLAS_STATUS_SUCCESS (14 vs. 0)",
        "cublas",
        "cublas-status",
    ),
    (
        "Check failed: (cublasSgemm_v2(handle, ...)) == CUBLAS_STATUS_SUCCESS (13 vs. 0)",
        "cublas",
        "cublas-execution-failed",
    ),
    (
        "mshadow/stream_gpu-inl.h:115: Check failed: err == CUBLAS_STATUS_SUCCESS (3 vs. 0)",
        "oom",
        "cuda-library-alloc-failed",
    ),
    (
        "ERROR: CUBLASError(code 13, the GPU program failed to execute)",
        "cublas",
        "cublas-execution-failed",
    ),
    (
        "ERROR: CUBLASError(code 1, the library was not initialized)",
        "cublas",
        "cublas-not-initialized",
    ),
    ("cublas.cublasSgemm_v2 error 14", "cublas", "cublas-status"),
    ("curand.curandCreateGenerator error 203", "cublas", "cuda-math-library-status"),
    ("cufft.cufftPlanMany error 5", "cublas", "cuda-math-library-status"),
    ("cusolver.cusolverDnSgetrf error 7", "cublas", "cuda-math-library-status"),
    ("ValueError: rcond error 5 in solver", "user_error", None),
    ("cudnn.cudnnConvolutionForward error 3", "cudnn", "cudnn-status"),
    (
        "XlaRuntimeError: INTERNAL: RET_CHECK failure (gemm_algorithm_picker.cc:327) stream->parent()->GetBlasGemmAlgorithms(stream, &algorithms)",
        "cublas",
        "cublas-status",
    ),
    (
        "[TRT] [E] 1: [executionResources.cpp::setTacticSources::178] Error Code 1: Cudnn (Could not initialize cudnn, please check cudnn installation.)",
        "cudnn",
        "cudnn-not-initialized",
    ),
    # Time limits: Torque's mail, pynisher's limits.
    (
        "Aborted by PBS Server\nJob exceeded its walltime limit. Job was aborted\nSee Administrator for help",
        "timeout",
        "distributed-time-limit",
    ),
    (
        "pynisher.limit_function_call.WallTimeoutException: the function call exceeded its wall time",
        "timeout",
        "distributed-time-limit",
    ),
    # Data: labels against the logits, Caffe's data layers, CatBoost, Chainer, audio files.
    (
        "IndexError: (OutOfRange) label value should less than the shape of axis dimension when label value(9) not equal to ignore_index(-100)",
        "data_error",
        "data-target-out-of-bounds",
    ),
    (
        "F0508 softmax_loss_layer.cpp:68] Check failed: label_value < prob_.shape(softmax_axis_) (10 vs. 10)\n*** Check failure stack trace: ***\nAborted (core dumped)",
        "data_error",
        "data-target-out-of-bounds",
    ),
    (
        "luajit: ClassNLLCriterion.lua:44: Assertion `cur_target >= 0 && cur_target < n_classes' failed.  at /root/nn/generic/ClassNLLCriterion.c:52",
        "data_error",
        "data-target-out-of-bounds",
    ),
    (
        "/pytorch/aten/src/THCUNN/ClassNLLCriterion.cu:105: cunn_ClassNLLCriterion_updateOutput_kernel: block: [0,0,0], thread: [5,0,0] Assertion `t >= 0 && t < n_classes` failed.",
        "cuda_context_corrupted",
        "cuda-device-side-assert",
    ),
    (
        "RuntimeError: [enforce fail at cross_entropy_op.cc:30] (label.ndim() == 1) || (label.ndim() == 2 && label.dim32(1) == 1).",
        "data_error",
        "data-target-out-of-bounds",
    ),
    (
        'Bad value for num_feature[non_default_doc_idx=3,feature_idx=2]="abc": Cannot convert \'b"abc"\' to float',
        "data_error",
        "data-label-format",
    ),
    (
        "Invalid operation is performed in: SoftmaxCrossEntropy (Forward)\n\nExpect: in_types[1].dtype.kind == i\nActual: f != i",
        "data_error",
        "data-label-format",
    ),
    (
        "soundfile.LibsndfileError: Error opening 'clips/0001.wav': Format not recognised.",
        "data_error",
        "data-label-format",
    ),
    (
        "soundfile.LibsndfileError: Error opening 'clips/0001.wav': System error.",
        "user_error",
        None,
    ),
    (
        "F1223 data_transformer.cpp:621] Check failed: mean_values_.size() == 1 || mean_values_.size() == img_channels Specify either 1 mean_value or as many as channels: 3",
        "data_error",
        "data-label-format",
    ),
    (
        "F0929 data_transformer.cpp:194] Check failed: width <= datum_width (300 vs. 237)",
        "data_error",
        "data-label-format",
    ),
    (
        "mxnet.base.MXNetError: InferShape Error in softmax's label argument\nShape inconsistent, Provided =(128,), inferred shape=(128,1)",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        "ValueError: Shape mismatch: The shape of labels (received (1024,)) should equal the shape of logits except for the last dimension (received (512, 10)).",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        "RuntimeError: Sizes of tensors must match except in dimension 1. Expected size 16 but got size 15 for tensor number 1 in the list.",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        "java.lang.IllegalStateException: Column of left array 336 != rows of right 384 or rows of left array 1 != columns of right 2",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        "ValueError: Number of features of the model must match the input. Model n_features is 24 and input n_features is 8",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        "ValueError: Expected 2D array, got 1D array instead:\narray=[1. 2. 3.].",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        "ValueError: Cannot feed value of shape (32, 784) for Tensor 'x:0', which has shape '(?, 28, 28, 1)'",
        "data_error",
        "data-shape-mismatch",
    ),
    # Non-finite values: DL4J's score, a bare NaN line, xgboost's metric, old LAPACK, sampling.
    (
        "o.d.o.l.ScoreIterationListener - Score at iteration 20 is NaN",
        "numerical",
        "numerical-nonfinite",
    ),
    (
        "Epoch  0 Update  1 Cost  527.6\nNaN detected\nTraceback (most recent call last):",
        "numerical",
        "numerical-nonfinite",
    ),
    ("ValueError: No NaN detected in the inputs, but the shapes differ", "user_error", None),
    ("[0]\ttrain-rmse:nan\teval-rmse:nan", "numerical", "numerical-nonfinite"),
    ("[12]\ttrain-logloss:-nan", "numerical", "numerical-nonfinite"),
    ("[0]\ttrain-rmse:0.52\teval-rmse:0.61\nValueError: bad config", "user_error", None),
    (
        "RuntimeError: Lapack Error in potrf : the leading minor of order 3 is not positive definite",
        "numerical",
        "numerical-nonfinite",
    ),
    (
        "RuntimeError: probability tensor contains either `inf`, `nan` or e",
        "numerical",
        "numerical-nonfinite",
    ),
    # A device the library cannot use.
    (
        "RuntimeError: Found Tesla P100 which is too old to be supported by the triton GPU compiler, which is used as the backend.",
        "device_unavailable",
        "cuda-no-kernel-image",
    ),
    (
        "rocBLAS error: Cannot read /opt/rocm/lib/rocblas/library/TensileLibrary.dat: No such file or directory for GPU arch : gfx1103\n+++ killed by SIGABRT (core dumped) +++",
        "device_unavailable",
        "cuda-no-kernel-image",
    ),
    (
        "[TRT] [E] 6: The engine plan file is generated on an incompatible device, expecting compute 8.6 got compute 7.5, please rebuild.",
        "device_unavailable",
        "cuda-no-kernel-image",
    ),
    (
        'msg="Unable to load cudart CUDA management library libcudart.so.12: cudart init failure: 35"',
        "device_unavailable",
        "device-fallback-warning",
    ),
    (
        "InvalidArgumentError: Cannot assign a device to node 'x': Could not satisfy explicit device specification '/device:GPU:1' because no devices matching that specification are registered in this process; available devices: /job:localhost/replica:0/task:0/device:CPU:0",
        "device_unavailable",
        "cuda-no-device",
    ),
    (
        "Message: Pod Allocate failed due to requested number of devices unavailable for nvidia.com/gpu. Requested: 1, Available: 0",
        "device_unavailable",
        "cuda-no-device",
    ),
    (
        "_catboost.CatBoostError: catboost/libs/train_lib/train_model.cpp:738: GPU Device not found.",
        "device_unavailable",
        "cuda-no-device",
    ),
    (
        "RuntimeError: The MPS backend is supported on MacOS 12.3+.Current OS version can be queried using `sw_vers`",
        "device_unavailable",
        "cuda-no-device",
    ),
    ("[ 12.3] NVRM: No NVIDIA graphics adapter probed!", "device_unavailable", "cuda-no-device"),
    (
        "host:1:1 [0] misc/cudawrap.cc:179 NCCL WARN Failed to find CUDA library libcuda.so (NCCL_CUDA_PATH='') : libcuda.so: cannot open shared object file",
        "device_unavailable",
        "device-fallback-warning",
    ),
    # Host memory: TensorFlow 1's op on the CPU, Ray, PBS, pynisher, MXNet, old torch.
    (
        'ResourceExhaustedError: OOM when allocating tensor with shape[2304,384]\n\t [[Node: Sub = Sub[T=DT_FLOAT, _device="/job:localhost/replica:0/task:0/cpu:0"](a, b)]]',
        "host_oom",
        "cpu-device-oom",
    ),
    (
        'ResourceExhaustedError: OOM when allocating tensor with shape[2304,384]\n\t [[Node: Sub = Sub[T=DT_FLOAT, _device="/job:localhost/replica:0/task:0/gpu:0"](a, b)]]',
        "oom",
        "cuda-out-of-memory",
    ),
    (
        "Task f failed due to oom. Error: 2 worker(s) were killed due to the node running low on memory.",
        "host_oom",
        "host-memory-monitor",
    ),
    (
        "=>> PBS: job killed: mem job total 115343360 kb exceeded limit 115343360 kb",
        "host_oom",
        "host-memory-monitor",
    ),
    (
        "=>> PBS: job killed: vmem 5003276288 exceeded limit 4294967296",
        "host_oom",
        "host-memory-monitor",
    ),
    (
        "ValueError: Dummy prediction failed with run state StatusType.MEMOUT and additional output: {'error': 'Memout (used more than 3072 MB).'}",
        "host_oom",
        "host-memory-monitor",
    ),
    (
        "mxnet.base.MXNetError: [01:35:45] src/storage/./cpu_device_storage.h:73: Failed to allocate CPU Memory",
        "host_oom",
        "host-allocator-failed",
    ),
    (
        "RuntimeError: $ Torch: unable to mmap memory: you tried to mmap 0GB. at THAllocator.c:317",
        "host_oom",
        "host-shm-exhausted",
    ),
    # GPU memory: ggml's CUDA_CHECK, LoRAX's warm-up, an engine's GPU arena.
    (
        "CUDA error 2 at C:\\llama.cpp\\ggml-cuda.cu:1752: out of memory",
        "oom",
        "cuda-out-of-memory",
    ),
    (
        "CUDA error 700 at ggml-cuda.cu:6246: an illegal memory access was encountered",
        "cuda_context_corrupted",
        "cuda-illegal-memory-access",
    ),
    (
        "RuntimeError: Not enough memory to handle 4096 prefill tokens. You need to decrease --max-batch-prefill-tokens",
        "oom",
        "cuda-out-of-memory",
    ),
    (
        "ds4: ROCm model arena alloc failed for tensor-span:128 (1792.00 MiB chunk): out of memory",
        "oom",
        "cuda-out-of-memory",
    ),
    # Workers lost: Spark executors, Ray nodes and owners.
    (
        "WARN TaskSetManager: Lost task 0.0 in stage 0.0 (TID 0, 10.0.0.3): ExecutorLostFailure (executor 4 lost)",
        "worker_lost",
        "pool-worker-lost",
    ),
    (
        "The node with node id: 75b2ee and ip: 10.4.4.107 has been marked dead because the detector has missed too many heartbeats from it.",
        "worker_lost",
        "pool-worker-lost",
    ),
    (
        "ray.exceptions.OwnerDiedError: Failed to retrieve object 00ff. The object's owner has exited.",
        "worker_lost",
        "pool-worker-lost",
    ),
    # The review's look-alikes: warnings NCCL and Ollama go on after, other nodes' devices,
    # ordinary wording, AUC on a one-class set, a user's own scaler, statuses by number.
    (
        "NCCL WARN Failed to find CUDA library libcuda.so (NCCL_CUDA_PATH='')\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
        "oom",
        "cuda-out-of-memory",
    ),
    (
        "NCCL WARN Failed to find CUDA library libcuda.so (NCCL_CUDA_PATH='')\nSegmentation fault (core dumped)",
        "segfault",
        "text-crash",
    ),
    (
        "NCCL WARN Failed to find CUDA library libcuda.so (NCCL_CUDA_PATH='')\nKeyError: 'label'",
        "user_error",
        None,
    ),
    (
        "level=INFO msg=\"Unable to load cudart CUDA management library libcudart.so.12: cudart init failure: 35\"\nKeyError: 'response'",
        "user_error",
        None,
    ),
    (
        'ResourceExhaustedError: OOM when allocating tensor with shape[64,1024] on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc\n\t [[Node: _recv_x = _Recv[client_terminated=false, recv_device="/job:localhost/replica:0/task:0/device:GPU:0", send_device="/job:localhost/replica:0/task:0/device:CPU:0", _device="/job:localhost/replica:0/task:0/device:GPU:0"]()]]',
        "oom",
        "cuda-out-of-memory",
    ),
    (
        "ValueError: bad allocation strategy 'foo', expected one of 'greedy', 'fair'",
        "user_error",
        None,
    ),
    (
        # Not numerical: AUC is NaN on a one-class set. The one class is the data's (v23 named
        # sklearn's one-class checks data_error; this case said user_error, the fallback, before).
        "[0]\tvalidation_0-auc:nan\nValueError: Only one class present in y_true. ROC AUC score is not defined in that case.",
        "data_error",
        "data-label-format",
    ),
    (
        '  File "features/minmax_scaler.py", line 12, in transform\n    return (x - lo) / (hi - lo)\nZeroDivisionError: float division by zero',
        "user_error",
        None,
    ),
    (
        "ERROR: CUBLASError(code 13, the GPU program failed to execute)",
        "cublas",
        "cublas-execution-failed",
    ),
    ("cublas.cublasSgemm_v2 error 13", "cublas", "cublas-execution-failed"),
    (
        "RuntimeError: cublas runtime error : resource allocation failed at /pytorch/aten/src/THC/THCGeneral.cpp:250",
        "oom",
        "cuda-library-alloc-failed",
    ),
    (
        "Check failed: status == CUBLAS_STATUS_SUCCESS (8 vs. 0)",
        "device_unavailable",
        "cuda-no-kernel-image",
    ),
    ("cudnn.cudnnConvolutionForward error 2", "oom", "cuda-library-alloc-failed"),
    ("cudnn.cudnnConvolutionBackwardData error 8", "cudnn", "cudnn-execution-failed"),
    (
        "Cuda failure: 700\nAborted (core dumped)",
        "cuda_context_corrupted",
        "code:cudaErrorIllegalAddress",
    ),
]

# v12 half B and v13, fixed once v14 was being collected to replace them as held-out.
V12B: list[Case] = [
    # Paddle's kernel asserts; a host-side assert in a .cc file is not a kernel fault.
    (
        "Error: /paddle/phi/kernels/gpu/nll_loss.cu:43 Assertion `label >= 0 && label < n_classes` failed. label should not be out of bounds.",
        "cuda_context_corrupted",
        "cuda-device-side-assert",
    ),
    ("Error: /paddle/phi/kernels/cpu/foo.cc:43 Assertion `x` failed.", "user_error", None),
    # cuDNN, cuBLAS and the math libraries in dlib's, mshadow's, Marian's and TensorFlow's words.
    (
        "RuntimeError: Error while calling cudnnSetStream(handle, stream) in file dlib/cuda/cudnn_dlibapi.cpp:1007. code: 9",
        "cudnn",
        "cudnn-status",
    ),
    ("code: 4, reason: A call to cuDNN failed", "cudnn", "cudnn-status"),
    (
        "Check failed: (err) == (CUBLAS_STATUS_SUCCESS) Destory cublas handle failed",
        "cublas",
        "cublas-status",
    ),
    (
        "[dynet] Device(s) selected: 1CUBLAS failure in cublasSgemm_v2(h, ...)\n7",
        "cublas",
        "cublas-status",
    ),
    (
        "[2021-04-27] Error: Cublas Error: 13 - prod.cpp:118: cublasSgemm(handle, ...)",
        "cublas",
        "cublas-execution-failed",
    ),
    (
        "[2021-04-27] Error: Cublas Error: 14 - prod.cpp:118: cublasSgemm(handle, ...)",
        "cublas",
        "cublas-status",
    ),
    # Statuses by number are read as their names, in every spelling.
    # A number the status table does not list is still cuBLAS's.
    ("OSError: (External) CUBLAS error(99).", "cublas", "cublas-status"),
    (
        "[dynet] Device(s) selected: 0CUBLAS failure in cublasSgemm_v2(h, ...)\n99",
        "cublas",
        "cublas-status",
    ),
    (
        "Error: Cublas Error: 3 - prod.cpp:118: cublasSgemm(handle, ...)",
        "oom",
        "cuda-library-alloc-failed",
    ),
    ("OSError: (External) CUBLAS error(8).", "device_unavailable", "cuda-no-kernel-image"),
    ("OSError: (External) CUDNN error(8).", "cudnn", "cudnn-execution-failed"),
    ("OSError: (External) CUDNN error(2).", "oom", "cuda-library-alloc-failed"),
    (
        "Check failed: (status) == (CURAND_STATUS_SUCCESS) Set CURAND seed failed",
        "cublas",
        "cuda-math-library-status",
    ),
    ("mshadow/random.h:320: CURAND Gen Uniform failed", "cublas", "cuda-math-library-status"),
    (
        "Check failed: (err) == (CUFFT_SUCCESS) cufftPlan2d failed",
        "cublas",
        "cuda-math-library-status",
    ),
    (
        "E cuda_fft.cc:223] failed to make cuFFT batched plan:5",
        "cublas",
        "cuda-math-library-status",
    ),
    (
        "RuntimeError: jaxlib/gpu/solver.cc:110: operation gpusolverDnSgetrf_bufferSize(handle.get(), m, n) failed: invalid value",
        "cublas",
        "cuda-math-library-status",
    ),
    (
        " ** On entry to cusparseSpMV(): vector X must not be empty",
        "cublas",
        "cuda-math-library-status",
    ),
    # A device that is missing, too old, unhealthy or refused by the container runtime.
    (
        "ValueError: ProcessGroupNCCL is only supported with GPUs, no GPUs found!",
        "device_unavailable",
        "cuda-no-device",
    ),
    ("RuntimeError: No XPU devices are available.", "device_unavailable", "cuda-no-device"),
    # XPU's device count is a start-up warning: a crash after it is the crash, a bad ordinal
    # after it is the device.
    (
        "UserWarning: XPU Device count is zero! (Triggered internally)\nAborted (core dumped)",
        "segfault",
        "text-crash",
    ),
    ("UserWarning: XPU Device count is zero!", "device_unavailable", "device-fallback-warning"),
    ("UserWarning: XPU Device count is zero!\nValueError: bad config", "user_error", None),
    (
        "XPU Device count is zero!\nterminate called after throwing an instance of 'c10::Error'\n  what():  dpcppSetDevice: device_id is out of range\nAborted (core dumped)",
        "device_unavailable",
        "cuda-invalid-device-ordinal",
    ),
    (
        "Check failed: common::AllVisibleGPUs() >= 1 (0 vs. 1) : No visible GPU is found for XGBoost.",
        "device_unavailable",
        "cuda-no-device",
    ),
    (
        "Allocate failed due to no healthy devices present; cannot allocate unhealthy devices nvidia.com/gpu",
        "device_unavailable",
        "cuda-no-device",
    ),
    (
        "stderr: nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.2, please update your driver",
        "device_unavailable",
        "cuda-driver-mismatch",
    ),
    (
        "Error: unsupported CUDA version: driver 9.0 < image 10.1",
        "device_unavailable",
        "cuda-driver-mismatch",
    ),
    # Ollama's discovery lines are start-up warnings: alone they say no GPU; an error after them
    # decides.
    ("cuInit err: 999", "device_unavailable", "device-fallback-warning"),
    ("cuInit err: 0\nValueError: bad", "user_error", None),
    ("cuInit err: 999\nValueError: bad", "user_error", None),
    (
        "Unable to load cudart library /usr/lib/libcuda.so.535: cuda driver library init failure: 999",
        "device_unavailable",
        "device-fallback-warning",
    ),
    (
        "xgboost [11:11:59] WARNING: learner.cc:222: No visible GPU is found, setting `gpu_id` to -1",
        "device_unavailable",
        "device-fallback-warning",
    ),
    (
        "xgboost [11:11:59] WARNING: learner.cc:222: No visible GPU is found, setting `gpu_id` to -1\nXGBoostError: Label contains NaN, infinity or a value too large.",
        "numerical",
        "numerical-nonfinite",
    ),
    ('ERROR: could not load library "libcuda"', "device_unavailable", "cuda-init-failed"),
    # WSL: cuDNN's sub-library cannot find the driver's libcuda.so; that is cuDNN's failure.
    (
        "Could not load library libcudnn_ops_infer.so.8. Error: libcuda.so: cannot open shared object file: No such file or directory",
        "user_error",
        "cudnn-library-missing",
    ),
    (
        "RuntimeError: FlashAttention only supports Ampere GPUs or newer.",
        "device_unavailable",
        "cuda-no-kernel-image",
    ),
    ("RuntimeError: FlashAttention only supports fp16 and bf16 data type", "user_error", None),
    (
        "this kernel only supports Volta GPUs or newer; falling back to the reference implementation.\nValueError: bad",
        "user_error",
        None,
    ),
    # NCCL that cannot be loaded is an installation problem; XLA's quote of NCCL's last warning
    # is not an NCCL failure of its own.
    (
        "NCCL operation ncclCommInitRank(&comm) failed: Unable to load NCCL library. Multi-GPU collectives will not work.",
        "user_error",
        "user-nccl-not-built",
    ),
    (
        "nccl_utils.cc:134: NCCL operation ncclGetUniqueId(&id) failed: Unable to load NCCL library. Multi-GPU collectives will not work.. Last NCCL warning(error) log entry (may be unrelated) 'Unable to load NCCL library. Multi-GPU collectives will not work.'.",
        "user_error",
        "user-nccl-not-built",
    ),
    (
        "Error while creating shared memory segment /dev/shm/nccl-AbC123 (size 9637888)",
        "nccl",
        "nccl-error",
    ),
    # Launch watchdogs and collective stalls.
    (
        "Encountered a CUDA error: cudaDriver().CuEventSynchronize( event ) returned (702): Launch timeout",
        "timeout",
        "code:cudaErrorLaunchTimeout",
    ),
    (
        "Encountered a CUDA error: cudaDriver().CuMemcpyDtoHAsync( dst, src ) returned (700): Illegal address",
        "cuda_context_corrupted",
        "code:cudaErrorIllegalAddress",
    ),
    (
        "Error using gpuArray/mtimes\nThe kernel execution failed because the CUDA driver timeout was encountered.",
        "timeout",
        "cuda-launch-timeout",
    ),
    (
        "WARNING: One or more tensors were submitted to be reduced by subset of ranks and are waiting for remainder of ranks for more than 120 seconds.",
        "timeout",
        "distributed-time-limit",
    ),
    # Memory: the GPU's BFC allocator, MLX, cudaMallocAsync; the host's YARN, Rust and JVM.
    (
        "W bfc_allocator.cc:501] Allocator (GPU_1_bfc) ran out of memory trying to allocate 2.00GiB (rounded to 2147483648)",
        "oom",
        "cuda-out-of-memory",
    ),
    # TensorFlow's warning that it will retry with less memory is not a failure.
    (
        "W bfc_allocator.cc:246] Allocator (GPU_0_bfc) ran out of memory trying to allocate 2.20GiB with freed_by_count=0. The caller indicates that this is not a failure, but may mean that there could be performance gains if more memory were available.\nValueError: could not convert string to float: 'abc'",
        "data_error",
        "data-label-format",
    ),
    (
        "W bfc_allocator.cc:270] Ran out of memory trying to allocate 1.2GiB. See logs for memory state.",
        "oom",
        "cuda-out-of-memory",
    ),
    (
        "libc++abi: terminating due to uncaught exception of type std::runtime_error: [malloc_or_wait] Unable to allocate 4096 bytes.",
        "oom",
        "mps-out-of-memory",
    ),
    ("!!! Exception during processing !!! Allocation on device ", "oom", "cuda-out-of-memory"),
    (
        "Reason: Container killed by YARN for exceeding physical memory limits. 9.1 GB of 9 GB physical memory used.",
        "host_oom",
        "host-memory-monitor",
    ),
    (
        "memory allocation of 1048576 bytes failed\nAborted (core dumped)",
        "host_oom",
        "host-allocator-failed",
    ),
    (
        'Exception in thread "main" java.lang.OutOfMemoryError: Java heap space',
        "host_oom",
        "cpu-device-oom",
    ),
    # Lost executors and nodes with no cause named.
    (
        "ExecutorLostFailure (executor 3 exited caused by one of the running tasks) Reason: Remote RPC client disassociated.",
        "worker_lost",
        "pool-worker-lost",
    ),
    (
        "ray.exceptions.NodeDiedError: Task failed because the node it was running on is dead or unavailable. Node IP: 10.0.0.3",
        "worker_lost",
        "pool-worker-lost",
    ),
    # Labels and shapes in Caffe, DL4J, sklearn, TensorFlow 1, Keras, Theano, Julia, CatBoost.
    (
        "F0120 bbox_util.cpp:1190] Check failed: label < num_colors (21 vs. 21)",
        "data_error",
        "data-target-out-of-bounds",
    ),
    (
        "assertion failed: [`labels` out of bound] [Condition x < y did not hold element-wise:]",
        "data_error",
        "data-target-out-of-bounds",
    ),
    (
        "Check failed: bottom[0]->num() == bottom[1]->num() (32 vs. 64) The data and label should have the same number.",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        "Check failed: bottom[1]->count() == num_classes_ (7 vs. 5)",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        "Check failed: datum_channels == data_mean_.channels() (1 vs. 3)",
        "data_error",
        "data-shape-mismatch",
    ),
    ("Check failed: num_ == bottom[0]->num() (1 vs. 2)", "data_error", "data-shape-mismatch"),
    ("Check failed: solver_count == 1 (2 vs. 1)", "user_error", None),
    (
        "IllegalStateException: Invalid array shape: cannot associate an array with shape [10, 3] with a placeholder of shape [-1, 4]",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        "ND4JIllegalStateException: New shape length doesn't match original length: [12] vs [10].",
        "data_error",
        "data-shape-mismatch",
    ),
    ("java.lang.IllegalStateException: Mismatched shapes", "data_error", "data-shape-mismatch"),
    (
        "IllegalStateException: Sequence lengths do not match for RnnOutputLayer input and labels: input=[3, 7, 8]",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        "ValueError: Found array with dim 4. Estimator expected <= 2.",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        "ValueError: Number of features of the input must be equal to or greater than that of the fitted transformer. Transformer n_features is 9 and input n_features is 8.",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        "ValueError: Rank mismatch: Rank of labels (received 1) should equal rank of logits minus 1 (received 1).",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        "ValueError: Dimension 1 in both shapes must be equal, but are 10 and 2. Shapes are [?,10] and [?,2].",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        "ValueError: A target array with shape (64, 1) was passed for an output of shape (None, 3) while using as loss `binary_crossentropy`.",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        "ValueError: Input dimension mis-match. Input 2 (indices start at 0) has shape[1] == 5, but the output's size on that axis is 3.",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        'ERROR: DimensionMismatch("A has dimensions (3,4) but B has dimensions (5,6)")',
        "data_error",
        "data-shape-mismatch",
    ),
    (
        "DimensionMismatch: arrays could not be broadcast to a common size",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        "_catboost.pyx in _catboost._FloatOrNanFromString()\nTypeError: Cannot convert 'b'abc'' to float",
        "data_error",
        "data-label-format",
    ),
    # Non-finite values found by Theano and training loops; LAPACK's SVD.
    (
        "AssertionError: Inf detected\nNanGuardMode found an error in the output of a node in this variable:",
        "numerical",
        "numerical-nonfinite",
    ),
    (
        "Epoch 3: LOSS EXPLOSION (>1e8) ! PLEASE SET PROPER PARAMETERS",
        "numerical",
        "numerical-nonfinite",
    ),
    (
        "INFO: gradient clipping enabled to prevent loss explosion\nKeyError: 'val_acc'",
        "user_error",
        None,
    ),
    (
        "numpy.linalg.LinAlgError: SVD did not converge in Linear Least Squares",
        "numerical",
        "numerical-nonfinite",
    ),
    ("numpy.linalg.LinAlgError: Singular matrix", "user_error", None),
]

# v14, fixed once v15 was being collected to replace it as held-out.
V14: list[Case] = [
    # PyTorch 2.5+'s NCCL watchdog; XLA's coordination service; training loops' own time limits.
    (
        "[rank0]:[E419 18:14:51.95 ProcessGroupNCCL.cpp:1834] [PG ID 0 PG GUID 0(default_pg) Rank 0] Timeout at NCCL work: 12, last enqueued NCCL work: 13, last completed NCCL work: 11.",
        "timeout",
        "nccl-watchdog-timeout",
    ),
    (
        "[rank3]:[E723 ProcessGroupNCCL.cpp:1743] [PG ID 0 PG GUID 0(default_pg) Rank 3] Received a dump signal due to a collective timeout from this local rank and we will try our best to dump the debug info.",
        "timeout",
        "nccl-watchdog-timeout",
    ),
    (
        "DEADLINE_EXCEEDED: GetKeyValue() timed out with key: nccl_clique_id_0 and duration: 5m",
        "timeout",
        "distributed-store-timeout",
    ),
    (
        "    self.client.shutdown()\njaxlib.xla_extension.XlaRuntimeError: DEADLINE_EXCEEDED: Deadline Exceeded",
        "timeout",
        "distributed-time-limit",
    ),
    # The shutdown's complaint after the task's own error is noise.
    (
        "FloatingPointError: invalid value (nan) encountered in mul\nE coordination_service_agent.cc:481] Failed to disconnect from coordination service with status: DEADLINE_EXCEEDED: Deadline Exceeded",
        "numerical",
        "numerical-nonfinite",
    ),
    ("[INFO] - Time limit of 30m reached. Stopping training.", "timeout", "distributed-time-limit"),
    (
        "Time limit reached. Elapsed time is 1:00:00. Signaling Trainer to stop.",
        "timeout",
        "distributed-time-limit",
    ),
    ("Time limit reached for this trial", "user_error", None),
    # The types: asyncio's and concurrent.futures' TimeoutError.
    (
        "asyncio.exceptions.TimeoutError: 3/14 nanny worker(s) did not shut down within 120s",
        "timeout",
        "distributed-time-limit",
    ),
    ("concurrent.futures._base.TimeoutError", "timeout", "distributed-time-limit"),
    # NCCL in TensorFlow 1 and behind AWS EFA; memory registration is NCCL's failure.
    (
        "W op_kernel.cc:1651] OP_REQUIRES failed at nccl_ops.cc:104 : Internal: unhandled cuda error",
        "nccl",
        "nccl-error",
    ),
    (
        "host:149:298 [5] register_mr_buffers:465 NCCL WARN NET/OFI Unable to register memory (type = 1) for device 0. RC: 12, Error: Cannot allocate memory",
        "nccl",
        "nccl-error",
    ),
    ("OSError: [Errno 12] Cannot allocate memory", "host_oom", "host-allocator-failed"),
    ("bash: fork: Cannot allocate memory", "host_oom", "host-allocator-failed"),
    # Slurm's srun ending a step after one task exited; scancel's cancel stays interrupted.
    (
        "srun: error: node1: task 5: Exited with exit code 1\nsrun: launch/slurm: _step_signal: Terminating StepId=42.0\nslurmstepd: error: *** STEP 42.0 ON node1 CANCELLED AT 2021-07-14T08:00:36 ***\nsrun: error: node1: tasks 0-3: Killed",
        "worker_lost",
        "slurm-step-killed-after-task",
    ),
    (
        "srun: error: node1: task 5: Exited with exit code 1\nsrun: launch/slurm: _step_signal: Terminating StepId=42.0\nslurmstepd: error: *** STEP 42.0 ON node1 CANCELLED AT 2021-07-14T08:00:36 ***\nValueError: bad config",
        "user_error",
        None,
    ),
    # A task that crashed is the crash, whatever srun does to the others afterwards.
    (
        "srun: error: node1: task 5: Segmentation fault (core dumped)\nsrun: launch/slurm: _step_signal: Terminating StepId=42.0\nslurmstepd: error: *** STEP 42.0 ON node1 CANCELLED AT 2021-07-14T08:00:36 ***",
        "segfault",
        "text-crash",
    ),
    (
        "slurmstepd: error: *** STEP 42.0 ON node1 CANCELLED AT 2021-07-14T08:00:36 ***",
        "interrupted",
        "text-interrupted",
    ),
    # cuBLAS, cuSOLVER and cuDNN by number and in TensorFlow's RNN.
    ("OSError: (External) CUBLAS error(13).", "cublas", "cublas-execution-failed"),
    ("OSError: (External) CUBLAS error(7).", "cublas", "cublas-status"),
    (
        "ERROR: CUSPARSEError(code 3, an invalid value was used as an argument)",
        "cublas",
        "cuda-math-library-status",
    ),
    (
        "InternalError: Failed to call ThenRnnBackward with model config: [rnn_mode]: 2",
        "cudnn",
        "cudnn-status",
    ),
    # MXNet's pooled cudaMalloc, as pastes wrap it; its other reasons are not memory.
    (
        "what():  [10:44:35] src/storage/./pooled_storage_manager.h:107: cudaMalloc fail\ned: out of memory",
        "oom",
        "cuda-out-of-memory",
    ),
    (
        "src/storage/./pooled_storage_manager.h:107: cudaMalloc failed: operation not permitted when stream is capturing",
        "user_error",
        "user-cuda-stream-capture",
    ),
    # A GPU the kernel driver could not bring up.
    (
        "[   21.09] NVRM: GPU 0000:65:00.0: RmInitAdapter failed! (0x26:0xffff:1290)",
        "device_unavailable",
        "cuda-init-failed",
    ),
    (
        "2015-12-28 13:13:21 [20151228-131316-6a72] [INFO ] Job aborted.",
        "interrupted",
        "text-interrupted",
    ),
    ("Spark: Job aborted due to stage failure: Task 3 in stage 1.0 failed", "user_error", None),
    # Shapes and indices in xgboost, LightGBM, MXNet, TensorFlow, torch and PyG.
    (
        "Check failed: preds.size() == info.labels_.size() (100 vs. 50) SoftmaxMultiClassObj: label size and pred size does not match",
        "data_error",
        "data-shape-mismatch",
    ),
    ("api error: len of label is not same with #data", "data_error", "data-shape-mismatch"),
    (
        "InferShape Error in fullyconnected0's weight argument\nShape inconsistent, Provided=(2,3), inferred shape=(3,2)",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        "Assignment: Shape of Tensors are not consistent with target, eshape: (8,10) dshape:(8,5)",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        "InvalidArgumentError: input must have 3 channels but instead has 4 channels.",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        "RuntimeError: Given normalized_shape=[768], expected input with shape [*, 768], but got input of size[2, 10, 512]",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        "InvalidArgumentError: Not enough time for target transition sequence (required: 30, available: 12)",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        "RuntimeError: INDICES element is out of DATA bounds, id=300 axis_dim=200",
        "data_error",
        "data-index-out-of-range",
    ),
    # CatBoost: a string in a numeric column is data; pandas.NA is not that check.
    (
        "_catboost.pyx in _catboost._FloatOrNan()\nTypeError: float() argument must be a string or a number, not 'NAType'",
        "user_error",
        None,
    ),
    # Non-finite values in sampling, assignment and Cholesky.
    # All-zero weights (a data problem) also give "sum of probabilities <= 0".
    (
        "RuntimeError: invalid multinomial distribution (encountering probability entry = infinity or NaN)",
        "numerical",
        "numerical-nonfinite",
    ),
    (
        "RuntimeError: invalid multinomial distribution (sum of probabilities <= 0)",
        "user_error",
        None,
    ),
    (
        "RuntimeError: invalid multinomial distribution (with replacement=False, not enough non-negative category to sample)",
        "user_error",
        None,
    ),
    ("ValueError: matrix contains invalid numeric entries", "numerical", "numerical-nonfinite"),
    (
        "InvalidArgumentError: Cholesky decomposition was not successful. The input might not be valid.",
        "numerical",
        "numerical-nonfinite",
    ),
    # Host memory in JavaCPP, Windows (German), Paddle and Julia; CUDA.jl's GPU OOM stays oom.
    (
        "java.lang.OutOfMemoryError: Physical memory usage is too high: physicalBytes (16G) > maxPhysicalBytes (16G)",
        "host_oom",
        "cpu-device-oom",
    ),
    (
        "ImportError: DLL load failed: Die Auslagerungsdatei ist zu klein, um diesen Vorgang durchzuführen.",
        "host_oom",
        "host-allocator-failed",
    ),
    (
        "ResourceExhaustedError: Fail to alloc memory of 1048576 size, error code is 12.",
        "host_oom",
        "host-allocator-failed",
    ),
    ("ERROR: LoadError: OutOfMemoryError()\nStacktrace:", "host_oom", "cpu-device-oom"),
    (
        "ERROR: Out of GPU memory trying to allocate 1.5 GiB\nCUDA.OutOfGPUMemoryError",
        "oom",
        "cuda-out-of-memory",
    ),
    # Workers lost in Julia, Jupyter and R; a result that cannot be unpickled is a code bug.
    (
        "Worker 12 terminated.\nUnhandled Task ERROR: EOFError: read end of file",
        "worker_lost",
        "pool-worker-lost",
    ),
    (
        "The kernel appears to have died. It will restart automatically.",
        "worker_lost",
        "pool-worker-lost",
    ),
    (
        "Warning message:\nIn mclapply(1:8, f, mc.cores = 8) :\n  scheduled core 3 did not deliver results, all values of the job will be affected",
        "worker_lost",
        "pool-worker-lost",
    ),
    (
        "Warning message:\nIn mclapply(1:8, f) : scheduled cores 2, 5 encountered errors in user code, all values of the jobs will be affected",
        "user_error",
        None,
    ),
    ("3 parallel function calls did not deliver results", "worker_lost", "pool-worker-lost"),
    (
        "failed to receive message results from cluster RichSOCKnode #2. Post-mortem diagnostic: No process exists with this PID, i.e. the localhost worker is no longer alive.",
        "worker_lost",
        "pool-worker-lost",
    ),
    (
        "BrokenProcessPool: A result has failed to un-serialize. Please ensure that the objects returned by the function are always picklable.",
        "user_error",
        "pool-result-unpicklable",
    ),
    (
        '_RemoteTraceback:\n  File "loky/process_executor.py", line 624, in _queue_management_worker\n    result_item = result_reader.recv()\n  File "multiprocessing/connection.py", line 251, in recv\n    return _ForkingPickler.loads(buf.getbuffer())\nTypeError: __init__() takes 1 positional argument but 2 were given\nBrokenProcessPool',
        "user_error",
        "pool-result-unpicklable",
    ),
    (
        "joblib.externals.loky.process_executor.TerminatedWorkerError: A worker process managed by the executor was unexpectedly terminated.",
        "worker_lost",
        "pool-worker-lost",
    ),
]


V15: list[Case] = [
    # R's future: a cluster worker's connection broke and no result came back
    # (h15H-worker_lost-rfuture-*); a user error relayed by future is not that.
    (
        "ClusterFuture (<none>) failed to receive results from cluster RichSOCKnode #3 (PID 1234 on ‘node2’). The reason reported was ‘error reading from connection’.",
        "worker_lost",
        "pool-worker-lost",
    ),
    (
        'Error: Cannot resolve ClusterFuture (fit_model), because the connection to the worker is corrupt: Connection (connection: index=7, description="<-node3:11000") is no longer valid.',
        "worker_lost",
        "pool-worker-lost",
    ),
    (
        "The socket connection to the worker of ClusterFuture future (fit) is lost or corrupted: Connection (connection: index=5) is no longer valid.",
        "worker_lost",
        "pool-worker-lost",
    ),
    ("Error in future_lapply(): object 'train_df' not found", "user_error", None),
    # SoS's local worker killed (h15H-worker_lost-sos-local-worker-killed).
    ("ERROR: One of the local workers has been killed.", "worker_lost", "pool-worker-lost"),
    ("ERROR: One of the local workers has been restarted.", "user_error", None),
    # NCCL's duplicate GPU quoted without its WARN prefix (h15H-nccl-fairchem-duplicate-gpu);
    # torch's own device_ids check is a user error.
    (
        "misc/socket.cc Duplicate GPU detected : rank 5 and rank 4 both on CUDA device 41000",
        "nccl",
        "nccl-error",
    ),
    ("ValueError: Duplicate GPU ids in device_ids: [0, 0]", "user_error", None),
    # Intel GPUs: Level Zero / Unified Runtime / PI out of device memory (h15H-oom-ezpz-
    # aurora-*); host memory and a lost device are not GPU OOM.
    (
        "RuntimeError: level_zero backend failed with error: 39 (UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY)",
        "oom",
        "cuda-out-of-memory",
    ),
    (
        # PI's OUT_OF_RESOURCES is also a launch-resource limit (review of v15's cues): not OOM.
        "RuntimeError: Native API failed. Native API returns: -5 (PI_ERROR_OUT_OF_RESOURCES) -5 (PI_ERROR_OUT_OF_RESOURCES)",
        "user_error",
        None,
    ),
    ("zeMemAllocDevice failed: ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY", "oom", "cuda-out-of-memory"),
    (
        "RuntimeError: level_zero backend failed with error: 38 (UR_RESULT_ERROR_OUT_OF_HOST_MEMORY)",
        "host_oom",
        "host-allocator-failed",
    ),
    # (Since v27, whose two rows said so: a lost Level Zero device is a lost context, sticky.)
    (
        "RuntimeError: level_zero backend failed with error: 20 (UR_RESULT_ERROR_DEVICE_LOST)",
        "cuda_context_corrupted",
        "accelerator-device-lost",
    ),
    # V8's heap limit before the abort (h15J-host_oom-node-heap-abort); a bare abort stays a
    # crash.
    (
        "FATAL ERROR: CALL_AND_RETRY_LAST Allocation failed - JavaScript heap out of memory\n 1: 0x8dc510 node::Abort() [node]\nAborted (core dumped)",
        "host_oom",
        "host-allocator-failed",
    ),
    (
        "FATAL ERROR: Ineffective mark-compacts near heap limit Allocation failed - JavaScript heap out of memory",
        "host_oom",
        "host-allocator-failed",
    ),
    ("Aborted (core dumped)", "segfault", "text-crash"),
    # slurmstepd's memory-limit kill (h15J-host_oom-slurm-catboost-memlimit); the 'at some
    # point' note, printed for steps that finish, is not.
    (
        "slurmstepd: error: Job 48213 exceeded memory limit (8400000 > 8388608), being killed",
        "host_oom",
        "host-memory-monitor",
    ),
    ("slurmstepd: error: Exceeded job memory limit", "host_oom", "host-memory-monitor"),
    ("slurmstepd: error: Exceeded step memory limit at some point.", "user_error", None),
    # torch.distributions constraints that only non-finite or drifting values fail
    # (h15I-numerical-categorical-simplex-bayestme); a value outside the support is not.
    (
        "ValueError: Expected parameter probs (Tensor of shape (64, 10)) of distribution Categorical(probs: torch.Size([64, 10])) to satisfy the constraint Simplex(), but found invalid values:\ntensor([[nan, nan, nan]], grad_fn=<DivBackward0>)",
        "numerical",
        "numerical-nonfinite",
    ),
    (
        "ValueError: Expected parameter loc (Tensor of shape (32, 2)) of distribution MultivariateNormal(loc: torch.Size([32, 2]), covariance_matrix: torch.Size([32, 2, 2])) to satisfy the constraint IndependentConstraint(Real(), 1), but found invalid values:",
        "numerical",
        "numerical-nonfinite",
    ),
    (
        "ValueError: Expected value argument (Tensor of shape (64,)) to be within the support (IntegerInterval(lower_bound=0, upper_bound=9)) of the distribution Categorical(probs: torch.Size([64, 10])), but found invalid values:",
        "user_error",
        None,
    ),
    # torch's LAPACK errors before linalg: SVD/eigen not converging, a zero Cholesky pivot
    # (h15I-numerical-torch-svd-*, h15I-numerical-botorch-cholesky-*); a singular solve or
    # inverse is not matched.
    (
        "RuntimeError: Lapack Error syev : 3 off-diagonal elements didn't converge to zero at /pytorch/aten/src/TH/generic/THTensorLapack.cpp:421",
        "numerical",
        "numerical-nonfinite",
    ),
    (
        "RuntimeError: Lapack Error in gesdd : 12 superdiagonals failed to converge. at /opt/conda/conda-bld/pytorch/aten/src/TH/generic/THTensorLapack.cpp:384",
        "numerical",
        "numerical-nonfinite",
    ),
    (
        "RuntimeError: Lapack Error in gesv : U(2,2) is zero, singular U. at /pytorch/aten/src/TH/generic/THTensorLapack.cpp:47",
        "user_error",
        None,
    ),
    (
        "RuntimeError: cholesky_cuda: For batch 3: U(16,16) is zero, singular U.",
        "numerical",
        "numerical-nonfinite",
    ),
    ("RuntimeError: inverse_cuda: For batch 0: U(3,3) is zero, singular U.", "user_error", None),
    # xgboost's gpu_hist gradient-sum check (h15I-numerical-xgboost-gpu-hist-abs-max).
    (
        "xgboost.core.XGBoostError: [10:11:12] /workspace/src/tree/updater_gpu_hist.cu:301: Check failed: abs_max < std::pow(2.0f, 16.0f) (70000 vs. 65536) Labels are too large for this algorithm. Rescale to less than 2^16.",
        "numerical",
        "numerical-nonfinite",
    ),
    # CatBoost: NaNs in the evaluation set only (h15I-data_error-catboost-nans-in-test-not-
    # learn).
    (
        "_catboost.CatBoostError: catboost/libs/data/quantization.cpp:2432: There are NaNs in test dataset (feature number 12) but there were no NaNs in learn dataset",
        "data_error",
        "data-label-format",
    ),
    # sklearn's metrics given probabilities or one-hot rows (h15I-user_error-sklearn-mix-
    # binary-continuous; the v9 row relabelled to match); a classifier fit on continuous
    # labels stays data_error.
    (
        "ValueError: Classification metrics can't handle a mix of multilabel-indicator and multiclass targets",
        "user_error",
        "user-metric-inputs",
    ),
    ("ValueError: Unknown label type: 'continuous'", "data_error", "data-label-format"),
    ("slurmstepd: error: Exceeded job memory limit at some point.", "user_error", None),
]


V16: list[Case] = [
    # DeepSpeed's transformer kernels print the cuBLAS status by number (h16A-ds454-*); the
    # line without a status names nothing.
    (
        "!!!! kernel execution error. (m: 1024, n: 512, k: 1024, error: 14)",
        "cublas",
        "cublas-status",
    ),
    (
        "!!!! kernel execution error. (m: 4096, n: 8, k: 4096, error: 13)",
        "cublas",
        "cublas-execution-failed",
    ),
    ("!!!! kernel execution error.", "user_error", None),
    # ATen's cuDNN code asserting that a cuDNN graph ran (h16B-sdpa-mha-assert); an internal
    # assert elsewhere in ATen is not cuDNN's.
    (
        'RuntimeError: graph.execute(handle, variant_pack, workspace.data_ptr()).is_good() INTERNAL ASSERT FAILED at "/pytorch/aten/src/ATen/native/cudnn/Conv_v8.cpp":388, please report a bug to PyTorch.',
        "cudnn",
        "cudnn-status",
    ),
    (
        'RuntimeError: !grad_output.is_nested() INTERNAL ASSERT FAILED at "/pytorch/aten/src/ATen/native/nested/NestedTensorBackward.cpp":164, please report a bug to PyTorch.',
        "user_error",
        None,
    ),
    # torch < 1.2's dtype wording, for the target only (h16F-maml-nll-target-int, h16F-kth-
    # nll-target-byte); a Float/Double mix in other arguments is the code's.
    (
        "RuntimeError: Expected object of scalar type Long but got scalar type Float for argument #2 'target' in call to _thnn_nll_loss_forward",
        "data_error",
        "data-label-format",
    ),
    (
        "RuntimeError: Expected object of scalar type Float but got scalar type Double for argument #2 'mat2'",
        "user_error",
        None,
    ),
    # torchvision's degenerate boxes (h16F-tv5163-invalid-box, h16F-tv8376-visdrone-box);
    # xgboost's classes check quoted either way (h16F-skada-xgb-invalid-classes).
    (
        "AssertionError: All bounding boxes should have positive height and width. Found invalid box [10.0, 20.0, 10.0, 45.0] for target at index 3.",
        "data_error",
        "data-label-format",
    ),
    (
        "ValueError: Invalid classes inferred from unique values of `y`.  Expected: [0 1], got [1 2]",
        "data_error",
        "data-label-format",
    ),
    # Non-finite predictions and outputs (h16F-evalml-r2-ypred-nan, h16F-euroeval-nan-
    # outputs).
    ("ValueError: Input y_pred contains NaN.", "numerical", "numerical-nonfinite"),
    (
        "AutoML search raised a fatal exception: R2 encountered ValueError with message (y_predicted contains NaN or infinity):",
        "numerical",
        "numerical-nonfinite",
    ),
    ("RuntimeError: NaN values detected in the model's logits", "numerical", "numerical-nonfinite"),
    (
        "ValueError: Input contains NaN, infinity or a value too large for dtype('float64').",
        "numerical",
        "numerical-nonfinite",
    ),
    # Anomaly mode naming any node, also broken across lines by a paste (h16F-pt46155-anomaly-
    # stackbackward-pl); the in-place error it often precedes stays user_error.
    (
        'Warning: Error detected in CopySlices. Traceback of forward call that caused the error:\n  File "train.py", line 10, in <module>',
        "numerical",
        "numerical-anomaly-mode",
    ),
    (
        "[W python_anomaly_mode.cpp:104] Warning: Error detected in ConvolutionBack\nward0. Traceback of forward call that caused the error:",
        "numerical",
        "numerical-anomaly-mode",
    ),
    (
        "RuntimeError: one of the variables needed for gradient computation has been modified by an inplace operation: [torch.cuda.FloatTensor [64]] is at version 3; expected version 2 instead.",
        "user_error",
        "user-inplace-modified",
    ),
    # Ray's memory monitor, newer wording (h16E-vllm-rayworker-mem-threshold).
    (
        "Memory on the node (IP: 10.0.0.5, ID: abc) where the task (task ID: 1f, name=train_fn, pid=901, memory used=30.10GB) was running was 60.5GB / 63.6GB (0.951), which exceeds the memory usage threshold of 0.95. Ray killed this worker (ID: 9c) because it was the most recently scheduled task",
        "host_oom",
        "host-memory-monitor",
    ),
    # RAFT's NCCL wrapper and NCCL's mismatched collectives (h16C-cuml4741-raft-nccl-init,
    # h16C-nccl296-mismatched-collective); a table of NCCL codes in code is nothing.
    (
        "RuntimeError: NCCL_ERROR: b'remote process exited or there was a network error'",
        "nccl",
        "nccl-error",
    ),
    (
        "init.cc:1247 NCCL WARN Mismatched collective detected, please check your collective calls at and around rank 3.",
        "nccl",
        "nccl-error",
    ),
    ("NCCL_ERROR_CODES = {0: 'ncclSuccess'}", "user_error", None),
    # Time limits outside NCCL (h16C-*-timeout): Dask's connect limit (not a refused
    # connection), rabit, Ray Train's worker-group start, pytest-timeout, stopit.
    (
        "OSError: Timed out trying to connect to 'tcp://10.1.2.3:8786' after 30 s: connect() didn't finish in time",
        "timeout",
        "dask-connect-timeout",
    ),
    (
        "OSError: Could not connect to 'tcp://10.1.2.3:8786': [Errno 111] Connection refused",
        "user_error",
        None,
    ),
    (
        "xgboost.core.XGBoostError: [10:00:00] /workspace/rabit/src/allreduce_base.cc:392: Poll timeout",
        "timeout",
        "distributed-time-limit",
    ),
    (
        "ray.train.WorkerGroupStartupTimeoutError: The worker group startup timed out after 60.0 seconds waiting for 4 workers.",
        "timeout",
        "distributed-time-limit",
    ),
    (
        "FAILED tests/test_train.py::test_long_epoch - Failed: Timeout >300.0s",
        "timeout",
        "distributed-time-limit",
    ),
    (
        "+++++++++++++++++++++++++++++++++++ Timeout ++++++++++++++++++++++++++++++++++++",
        "timeout",
        "distributed-time-limit",
    ),
    ("stopit.utils.TimeoutException", "timeout", "distributed-time-limit"),
    # Spark's executor lost for no stated cause; Colab's, VS Code's and Jupyter server's
    # kernel restarts (h16E-xgb4j-spark-worker-lost, h16E-*-kernel-*, h16E-ultralytics-colab-
    # session-restart); Colab's RAM message stays host_oom.
    (
        "org.apache.spark.SparkException: Job aborted due to stage failure: Task 3 in stage 2.0 failed 4 times, most recent failure: Lost task 3.3 in stage 2.0: ExecutorLostFailure (executor 7 exited unrelated to the running tasks) Reason: Container marked as failed",
        "worker_lost",
        "pool-worker-lost",
    ),
    ("Your session crashed. Automatically restarting.", "worker_lost", "pool-worker-lost"),
    ("Your session crashed after using all available RAM.", "host_oom", "host-memory-monitor"),
    (
        "10:01:02.123 [error] Disposing session as kernel process died ExitCode: 1, Reason:",
        "worker_lost",
        "pool-worker-lost",
    ),
    (
        "[I 2024-01-01 10:00:00.000 ServerApp] KernelRestarter: restarting kernel (1/5), keep random ports",
        "worker_lost",
        "pool-worker-lost",
    ),
    (
        "WARNING:root:kernel 4222e7b2-aca5-4c53-972e-ea8892e41d74 restarted",
        "worker_lost",
        "pool-worker-lost",
    ),
    # loky failing to unpickle a task is the code's, like a result (h16E-*-loky-task-
    # unserialize).
    (
        "joblib.externals.loky.process_executor.BrokenProcessPool: A task has failed to un-serialize. Please ensure that the arguments of the function are all picklable.",
        "user_error",
        "pool-result-unpicklable",
    ),
    # A script srun could not execute (h16G-slurm-execve-missing-script); srun's short
    # 'Terminating StepId' form after a task exited; a bare cancel stays interrupted.
    (
        "slurmstepd: error: execve(): train.py: Permission denied\nsrun: error: node1: task 0: Exited with exit code 13\nsrun: Terminating StepId=42.0\nslurmstepd: error: *** STEP 42.0 ON node1 CANCELLED AT 2024-01-01T00:00:00 ***",
        "user_error",
        "user-launch-failed",
    ),
    (
        "srun: error: node1: task 3: Exited with exit code 1\nsrun: Terminating StepId=77.0\nslurmstepd: error: *** STEP 77.0 ON node1 CANCELLED AT 2024-01-01T00:00:00 ***",
        "worker_lost",
        "slurm-step-killed-after-task",
    ),
    (
        "slurmstepd: error: *** STEP 77.0 ON node1 CANCELLED AT 2024-01-01T00:00:00 ***",
        "interrupted",
        "text-interrupted",
    ),
    # EGL finding no CUDA device (h16G-habitat-egl-cuda-device-cancelled).
    (
        "Platform::WindowlessEglApplication::tryCreateContext(): unable to find CUDA device 0 among 2 EGL devices in total",
        "device_unavailable",
        "cuda-invalid-device-ordinal",
    ),
    # A Windows tool's access violation (h16E-xformers-win-ptxas-access-violation); another
    # NTSTATUS is not matched.
    ("error   : 'cicc' died with status 0xC0000005 (ACCESS_VIOLATION)", "segfault", "text-crash"),
    ("error   : 'ptxas' died with status 0xC0000409", "user_error", None),
]


V17: list[Case] = [
    # A cuDNN library that cannot be loaded is an installation problem, user_error like NCCL's
    # (h17A-faster-whisper-libcudnn-ops-infer-missing; 25 older rows relabelled); cuDNN
    # failing at run time stays cudnn.
    (
        "Could not load library libcudnn_cnn_infer.so.8. Error: libcudnn_cnn_infer.so.8: cannot open shared object file: No such file or directory",
        "user_error",
        "cudnn-library-missing",
    ),
    ("RuntimeError: cuDNN error: CUDNN_STATUS_NOT_INITIALIZED", "cudnn", "cudnn-not-initialized"),
    # abseil's failure signal handler (Ray, TensorFlow) reporting a stop signal, then the
    # abort (h17C-sigterm-received-flower-ray, h17F-ray-sigterm-aborted-lmapf); a crash signal
    # it reports stays a crash.
    (
        "*** SIGTERM received at time=1700000000 on cpu 3 ***\nPC: @     0x7f0bf9582117  (unknown)  (unknown)\nAborted (core dumped)",
        "interrupted",
        "signal-handler-stop",
    ),
    (
        "[2024-01-01 10:00:00,000 E 123 123] logging.cc:440: *** SIGINT received at time=1700000000 on cpu 0 ***",
        "interrupted",
        "signal-handler-stop",
    ),
    (
        "*** SIGSEGV received at time=1700000000 on cpu 3 ***\nPC: @     0x7f0bf9582117  (unknown)  (unknown)",
        "segfault",
        "text-crash",
    ),
    # A port already in use (h17C-init-pg-tcpstore-eaddrinuse); NCCL's own bind failure stays
    # nccl, other network errors stay weak nccl evidence.
    (
        "torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. port: 29500, useIpv6: false, code: -98, name: EADDRINUSE, message: address already in use",
        "user_error",
        "user-address-in-use",
    ),
    # Only the rendezvous store's port names the cause (review): another server's bind error
    # is not recognised.
    ("OSError: [Errno 98] Address already in use", "user_error", None),
    (
        "misc/socket.cc:484 NCCL WARN socket bind failed: Address already in use",
        "nccl",
        "nccl-error",
    ),
    (
        "torch.distributed.DistNetworkError: Connection reset by peer",
        "nccl",
        "distributed-network-error",
    ),
    # pytest-xdist's crashed worker in its newer wording (h17D-xdist-transformers-gw-crashed).
    (
        "FAILED tests/test_model.py::test_forward[cuda] - worker 'gw3' crashed while running 'tests/test_model.py::test_forward[cuda]'",
        "worker_lost",
        "pool-worker-lost",
    ),
    ("[gw1] node down: Not properly terminated", "worker_lost", "pool-worker-lost"),
    # The kernel's log of a fatal trap (h17F-llamacpp-trap-invalid-opcode); prose naming the
    # trap is not a log line.
    (
        "kernel: traps: python[4242] trap invalid opcode ip:7f4aa44a4e94 sp:7ffceec92e60 error:0 in libtorch_cpu.so[7f4aa448a000+9f000]",
        "segfault",
        "text-crash",
    ),
    (
        "[12345.678] python3[9876]: segfault at 0 ip 00007f1234567890 sp 00007ffd12345678 error 4 in libc10.so[7f12345000+100000]",
        "segfault",
        "text-crash",
    ),
    (
        "traps: python3[555] general protection fault ip:7f00 sp:7ffd error:0 in libcuda.so.1",
        "segfault",
        "text-crash",
    ),
    ("trap invalid opcode in my notes about the CPU", "user_error", None),
    # Dask: a KilledWorker after the nanny's memory kill is host_oom, the monitor names the
    # cause (h17E-dask-killedworker-parquet, relabelled); alone it stays worker_lost.
    (
        "distributed.nanny.memory - WARNING - Worker tcp://127.0.0.1:37561 (pid=2599597) exceeded 95% memory budget. Restarting...\ndistributed.scheduler.KilledWorker: Attempted to run task ('f-1', 0) on 4 different workers, but all those workers died while running it.",
        "host_oom",
        "dask-nanny-memory",
    ),
    (
        "distributed.scheduler.KilledWorker: Attempted to run task ('f-1', 0) on 4 different workers, but all those workers died while running it.",
        "worker_lost",
        "pool-worker-lost",
    ),
]


REVIEW: list[Case] = [
    # Review of this session's cues (v15-v17), probing each with look-alikes. The kernel's
    # segfault line after a long unbroken token (the cue had an unbounded prefix: 79 ms on 4.6
    # KB).
    (
        '{"cfg":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}\n[812.1] python[4242]: segfault at 0 ip 00007f sp 00007ffd error 4 in libc.so.6',
        "segfault",
        "text-crash",
    ),
    # Numerical cues that would have pruned on a check that passed or a debug print.
    (
        "no NaN detected in model outputs\nReceived 15 death signal, shutting down workers",
        "interrupted",
        "text-interrupted",
    ),
    (
        "y_pred contains NaN: False\nValueError: Found input variables with inconsistent numbers of samples: [10, 12]",
        "data_error",
        "data-shape-mismatch",
    ),
    ("ValueError: Input y_prob contains NaN.", "numerical", "numerical-nonfinite"),
    # torch.distributions: a negative entry in a Simplex() dump is logits passed as probs (the
    # code's error); any constraint whose dump shows NaN is numerical.
    (
        "ValueError: Expected parameter probs (Tensor of shape (2, 3)) of distribution Categorical(probs: torch.Size([2, 3])) to satisfy the constraint Simplex(), but found invalid values:\ntensor([[ 0.3120, -0.2113,  0.8993],\n        [ 0.1000,  0.2000,  0.7000]])",
        "user_error",
        None,
    ),
    (
        "ValueError: Expected parameter scale (Tensor of shape (8,)) of distribution Normal(loc: torch.Size([8]), scale: torch.Size([8])) to satisfy the constraint GreaterThan(lower_bound=0.0), but found invalid values:\ntensor([nan, nan, nan, nan, nan, nan, nan, nan], grad_fn=<SoftplusBackward0>)",
        "numerical",
        "numerical-nonfinite",
    ),
    (
        "ValueError: Expected parameter scale (Tensor of shape (8,)) of distribution Normal(loc: torch.Size([8]), scale: torch.Size([8])) to satisfy the constraint GreaterThan(lower_bound=0.0), but found invalid values:\ntensor([-0.1, 0.2])",
        "user_error",
        None,
    ),
    # A port in use names the cause only for torch.distributed's store (another server's bind
    # error does not).
    (
        "OSError: [Errno 98] error while attempting to bind on address ('127.0.0.1', 8265): address already in use\nray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.",
        "worker_lost",
        "pool-worker-lost",
    ),
    (
        "torch.distributed.DistNetworkError: The server socket has failed to bind to [::]:29500 (errno: 98 - Address already in use).",
        "user_error",
        "user-address-in-use",
    ),
    # A signal handler's report yields to a plain error and ranks below a host-memory kill.
    (
        "ValueError: n_estimators must be an integer, got 0.5\n*** SIGTERM received at time=1700000000 on cpu 3 ***",
        "user_error",
        None,
    ),
    ("Killed\n*** SIGTERM received at time=1700000000 on cpu 3 ***", "host_oom", "text-sigkill"),
    (
        "*** SIGTERM (@0x3e8) received by PID 5312 (TID 0x7f00) from PID 1000; stack trace: ***",
        "interrupted",
        "signal-handler-stop",
    ),
    (
        "Termination signal is detected by the operating system.",
        "interrupted",
        "signal-handler-stop",
    ),
    # Dask's connect limit ranks below a pool worker's death; the address may be unquoted.
    (
        "distributed.nanny - WARNING - Restarting worker\nOSError: Timed out trying to connect to tcp://10.0.0.5:8786 after 30 s\ndistributed.scheduler.KilledWorker: Attempted to run task ('f-1', 0) on 4 different workers, but all those workers died while running it.",
        "worker_lost",
        "pool-worker-lost",
    ),
    (
        "OSError: Timed out trying to connect to tcp://10.0.0.5:8786 after 30 s",
        "timeout",
        "dask-connect-timeout",
    ),
    # V8: only its fatal error line, not advice that quotes it.
    (
        "npm WARN tip: if you see 'JavaScript heap out of memory', raise --max-old-space-size",
        "user_error",
        None,
    ),
    (
        "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory",
        "host_oom",
        "host-allocator-failed",
    ),
    # Other real wordings: srun's line between the step's end and its cancel, newer Jupyter, R
    # future's older wording, a script without a shebang, DeepSpeed's lines under a launcher
    # prefix, Windows paths, torch's collective fingerprint check, PI's host memory.
    (
        "srun: error: node1: task 3: Exited with exit code 1\nsrun: Terminating StepId=77.0\nsrun: Job step aborted: Waiting up to 32 seconds for job step to finish.\nslurmstepd: error: *** STEP 77.0 ON node1 CANCELLED AT 2024-01-01T00:00:00 ***",
        "worker_lost",
        "slurm-step-killed-after-task",
    ),
    (
        "[I 2024-01-01 10:00:00.000 ServerApp] AsyncIOLoopKernelRestarter: restarting kernel (1/5), keep random ports",
        "worker_lost",
        "pool-worker-lost",
    ),
    (
        "Error: Failed to retrieve the value of MultisessionFuture (<none>) from cluster RichSOCKnode #1 (PID 123 on localhost 'localhost').",
        "worker_lost",
        "pool-worker-lost",
    ),
    (
        "slurmstepd: error: execve(): ./run.sh: Exec format error",
        "user_error",
        "user-launch-failed",
    ),
    (
        "[default0]:!!!! kernel execution error. (m: 768, n: 4608, k: 3072, error: 13)",
        "cublas",
        "cublas-execution-failed",
    ),
    (
        'RuntimeError: graph.execute(handle) INTERNAL ASSERT FAILED at "C:\\actions-runner\\_work\\pytorch\\pytorch\\aten\\src\\ATen\\native\\cudnn\\MHA.cpp":410, please report a bug to PyTorch.',
        "cudnn",
        "cudnn-status",
    ),
    (
        "RuntimeError: Detected mismatch between collectives on ranks. Rank 0 is running collective: CollectiveFingerPrint(OpType=ALLREDUCE), but Rank 1 is running collective: CollectiveFingerPrint(OpType=BROADCAST).",
        "nccl",
        "nccl-error",
    ),
    (
        "RuntimeError: Native API failed. Native API returns: -6 (PI_ERROR_OUT_OF_HOST_MEMORY)",
        "host_oom",
        "host-allocator-failed",
    ),
    # Anomaly mode yields to a plain error and to a named bug; its own NaN report stays
    # numerical.
    (
        'Warning: Error detected in CopySlices. Traceback of forward call that caused the error:\n  File "train.py", line 10, in <module>\nRuntimeError: Trying to backward through the graph a second time (or directly access saved tensors after they have already been freed).',
        "user_error",
        "user-backward-twice",
    ),
    (
        "Warning: Error detected in MulBackward0. Traceback of forward call that caused the error:\n  File \"train.py\", line 10, in <module>\nTypeError: unsupported operand type(s) for *: 'Tensor' and 'NoneType'",
        "user_error",
        None,
    ),
    (
        "Warning: Error detected in MulBackward0. Traceback of forward call that caused the error:\n  File \"train.py\", line 10, in <module>\nRuntimeError: Function 'MulBackward0' returned nan values in its 0th output.",
        "numerical",
        "numerical-nonfinite",
    ),
]


V18: list[Case] = [
    # A source comment that a notebook traceback shows is not a failure (h18A-nowag-trainer-
    # interrupt: Ctrl-C in transformers' Trainer, whose comment reads 'if loss is nan or
    # inf'); log lines still are.
    (
        "   2563     # if loss is nan or inf simply add the average of previous logged losses",
        "user_error",
        None,
    ),
    ("--> 2563     # the loss is nan here when fp16 overflows", "user_error", None),
    (
        "KeyboardInterrupt\n   2563     # if loss is nan or inf simply add the average of previous logged losses",
        "interrupted",
        "keyboard-interrupt",
    ),
    ("Iter #12 loss: nan", "numerical", "numerical-nonfinite"),
    ("Epoch 3: loss = nan", "numerical", "numerical-nonfinite"),
    # A loss guard's own exception (h18A-vaetree-aux-inf); a message that names no NaN is not.
    ("ValueError: aux has a inf", "numerical", "numerical-nonfinite"),
    ("AssertionError: grad contains nan", "numerical", "numerical-nonfinite"),
    ("ValueError: input has an index", "user_error", None),
    # torch < 1.0's TH index check (h18D-presumm-th-index-range); another library's index
    # message is not matched.
    (
        "RuntimeError: index out of range at /pytorch/aten/src/TH/generic/THTensorEvenMoreMath.cpp:193",
        "data_error",
        "data-index-out-of-range",
    ),
    ("RuntimeError: index out of range at ../src/mylib/thing.cpp:12", "user_error", None),
]


V19: list[Case] = [
    # submitit's own time-limit report (h19C-transcoder-submitit-timed-out); its preemption
    # twin stays interrupted, and "has not timed out" is not a time limit.
    (
        "INFO:submitit:Job has timed out. Ran 1 minutes out of requested 5 minutes.\n"
        "WARNING:submitit:Caught signal 10 on beast: this job is timed-out.\n"
        "INFO:submitit:Job not requeued because: timed-out and not checkpointable.",
        "timeout",
        "distributed-time-limit",
    ),
    (
        "submitit WARNING (2021-04-01 02:26:27,643) - Caught signal SIGUSR2 on node12: this job is timed-out.",
        "timeout",
        "distributed-time-limit",
    ),
    (
        "submitit INFO (2021-04-01 02:26:27,643) - Job has timed out. Ran 720 minutes out of requested 720 minutes.",
        "timeout",
        "distributed-time-limit",
    ),
    (
        "submitit INFO - Job has not timed out. Ran 61 minutes out of requested 120 minutes.\n"
        "submitit WARNING - Caught signal SIGUSR1 on learnfair4096: this job is preempted.",
        "interrupted",
        "text-interrupted",
    ),
    # A dimension named on the user's own line (h19B-csta-mean-dim-range) is that line's
    # argument; the same error from a library's forward (an unbatched input) stays the data's.
    (
        "IndexError                                Traceback (most recent call last)\n"
        "Cell In[35], line 1\n----> 1 ls.mean(dim=1)\n\n"
        "IndexError: Dimension out of range (expected to be in range of [-1, 0], but got 1)",
        "user_error",
        "user-dim-argument",
    ),
    (
        "<ipython-input-7-0a1b2c3d4e5f> in <module>\n      3 probs = model(x)\n"
        "----> 4 top = probs.topk(5, dim=2)\n\n"
        "IndexError: Dimension out of range (expected to be in range of [-2, 1], but got 2)",
        "user_error",
        "user-dim-argument",
    ),
    (
        # An indented cell line looks like a library's; it is left to the data rule.
        "Cell In[4], line 6\n      4 for batch in loader:\n      5     out = net(batch)\n"
        "----> 6     loss = out.sum(1).mean()\n\n"
        "IndexError: Dimension out of range (expected to be in range of [-1, 0], but got 1)",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        'Traceback (most recent call last):\n  File "train.py", line 88, in <module>\n'
        "    loss = losses.sum(1).mean()\n"
        "IndexError: Dimension out of range (expected to be in range of [-1, 0], but got 1)",
        "user_error",
        "user-dim-argument",
    ),
    (
        'Traceback (most recent call last):\n  File "/home/u/run.py", line 12, in step\n'
        "    pred = torch.argmax(out, dim=1)\n             ^^^^^^^^^^^^^^^^^^^^^^^^\n"
        "IndexError: Dimension out of range (expected to be in range of [-1, 0], but got 1)",
        "user_error",
        "user-dim-argument",
    ),
    (
        'Traceback (most recent call last):\n  File "/opt/conda/lib/python3.10/site-packages/'
        'transformers/models/bert/modeling_bert.py", line 351, in forward\n'
        "    attention_probs = nn.functional.softmax(attention_scores, dim=-1)\n"
        "IndexError: Dimension out of range (expected to be in range of [-1, 0], but got -2)",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        "File ~/miniconda3/lib/python3.11/site-packages/torch/nn/functional.py:1858, in softmax\n"
        "-> 1858     ret = input.softmax(dim)\n\n"
        "IndexError: Dimension out of range (expected to be in range of [-1, 0], but got 1)",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        "IndexError: Dimension out of range (expected to be in range of [-1, 0], but got 1)",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        'Traceback (most recent call last):\n  File "train.py", line 88, in <module>\n'
        "    out = model(batch)\n"
        "IndexError: Dimension out of range (expected to be in range of [-1, 0], but got 1)",
        "data_error",
        "data-shape-mismatch",
    ),
]


V20: list[Case] = [
    # GPU memory in other stacks' words (h20A-kerasocr-tf-failed-alloc-bfc, h20A-noncerpro-cuda-
    # init-oom, h20D-theano-cnmem-device-oom); a host MemoryError stays host memory.
    ("ResourceExhaustedError: failed to allocate memory [Op:AddV2]", "oom", "cuda-out-of-memory"),
    (
        "tensorflow.python.framework.errors_impl.ResourceExhaustedError: {{function_node "
        "__wrapped__Mul_device_/job:localhost/replica:0/task:0/device:GPU:0}} failed to allocate "
        "memory [Op:Mul]",
        "oom",
        "cuda-out-of-memory",
    ),
    (
        'Cuda error in func "cuda_init_device" at line 33: out of memory.',
        "oom",
        "cuda-out-of-memory",
    ),
    ("Cuda error in file 'kernel.cu' in line 118 : out of memory.", "oom", "cuda-out-of-memory"),
    (
        "MemoryError: ('Error allocating 39190528 bytes of device memory "
        "(CNMEM_STATUS_OUT_OF_MEMORY).', \"you might consider using 'theano.shared(..., borrow=True)'\")",
        "oom",
        "cuda-out-of-memory",
    ),
    ("MemoryError: Unable to allocate 3.2 GiB for an array", "host_oom", "host-allocator-failed"),
    ("Cuda error in file 'kernel.cu' in line 118 : invalid argument.", "user_error", None),
    # cuRAND's internal failure by number (h20B-cunumeric-curand-abort) beats the abort after it.
    (
        "{6}{cunumeric.random}: Internal CURAND failure with error 999 in file bitgenerator.cu\n"
        "Signal 6 received by node 0, process 57059",
        "cublas",
        "cuda-math-library-status",
    ),
    # A cuDNN of another version than torch was built with is an installation problem, like
    # one that cannot be loaded (h20B-dadet-cudnn-version-mismatch, h20B-msswift-cudnn-sublib-
    # loading); cuDNN failing at run time stays cudnn.
    (
        "RuntimeError: cuDNN version mismatch: PyTorch was compiled against 7102 but linked against 7600",
        "user_error",
        "cudnn-library-missing",
    ),
    (
        "RuntimeError: cuDNN version incompatibility: PyTorch was compiled against (8, 3, 2) but linked against (8, 0, 3)",
        "user_error",
        "cudnn-library-missing",
    ),
    (
        "RuntimeError: CUDNN_BACKEND_TENSOR_DESCRIPTOR cudnnFinalize failedptrDesc->finalize() "
        "cudnn_status: CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED",
        "user_error",
        "cudnn-library-missing",
    ),
    (
        "cuDNN error: CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH",
        "user_error",
        "cudnn-library-missing",
    ),
    ("RuntimeError: cuDNN error: CUDNN_STATUS_MAPPING_ERROR", "cudnn", "cudnn-status"),
    # torch's cuDNN plan warning: cudnn alone, but it yields to the plain error after it
    # (h20B-chattts-cudnn-warn-then-valueerror); a real cuDNN error after it stays cudnn.
    (
        "conv.py:306: UserWarning: Plan failed with a cudnnException: CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR: "
        "cudnnFinalize Descriptor Failed cudnn_status: CUDNN_STATUS_NOT_SUPPORTED (Triggered internally at "
        "../aten/src/ATen/native/cudnn/Conv_v8.cpp:919.)",
        "cudnn",
        "cudnn-plan-warning",
    ),
    (
        "conv.py:306: UserWarning: Plan failed with a cudnnException: CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR: "
        "cudnnFinalize Descriptor Failed cudnn_status: CUDNN_STATUS_NOT_SUPPORTED\n"
        "  return F.conv1d(input, weight, bias, self.stride,\nTraceback (most recent call last):\n"
        '  File "soundfile.py", line 427, in save\n'
        '    raise ValueError(f"Expected 2D Tensor, got {src.ndim}D.")\n'
        "ValueError: Expected 2D Tensor, got 1D.",
        "user_error",
        None,
    ),
    (
        "conv.py:306: UserWarning: Plan failed with a cudnnException: cudnn_status: CUDNN_STATUS_NOT_SUPPORTED\n"
        "RuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED",
        "cudnn",
        "cudnn-execution-failed",
    ),
    # NCCL's result string under another framework's CUDA wording (h20C-ggml-nccl-groupend).
    (
        "CUDA error: unhandled cuda error (run with NCCL_DEBUG=INFO for details)\n"
        "  current device: 0, in function ggml_backend_cuda_comm_allreduce_tensor at ggml-cuda.cu:1237\n"
        "  ncclGroupEnd()",
        "nccl",
        "nccl-error",
    ),
    # Lightning finding no GPU (h20D-lightning-gpus-requested-none).
    (
        "MisconfigurationException: GPUs requested but none are available.",
        "device_unavailable",
        "cuda-no-device",
    ),
    # Data that does not fit (h20D-audio-np-inhomogeneous-features, h20D-sk-feature-names-
    # unseen, h20D-*-num-samples-0).
    (
        "ValueError: setting an array element with a sequence. The requested array has an "
        "inhomogeneous shape after 1 dimensions. The detected shape was (329,) + inhomogeneous part.",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        "ValueError: The feature names should match those that were passed during fit.\n"
        "Feature names unseen at fit time:\n- elevation:m",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        "ValueError: num_samples should be a positive integer value, but got num_samples=0",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        "ValueError: Found array with 0 sample(s) (shape=(0, 12)) while a minimum of 1 is required.",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        "ValueError: num_samples should be a positive integer value, but got num_samples=-1",
        "user_error",
        None,
    ),
    # A literal index on the user's own line past the size (h20D-cisc867-nb-index-oob); a
    # variable index, or one in a library's frame, stays the data's.
    (
        "<ipython-input-34-95a9c66cb98f> in <module>\n"
        "----> 4 dataset.show_spectros([spectros[2], spectros_pred[2]])\n\n"
        "IndexError: index 2 is out of bounds for dimension 0 with size 2",
        "user_error",
        "user-dim-argument",
    ),
    (
        'Traceback (most recent call last):\n  File "plot.py", line 9, in <module>\n'
        "    first = batch[3]\nIndexError: index 3 is out of bounds for axis 0 with size 3",
        "user_error",
        "user-dim-argument",
    ),
    (
        'Traceback (most recent call last):\n  File "train.py", line 9, in <module>\n'
        "    row = table[idx]\nIndexError: index 7 is out of bounds for dimension 0 with size 3",
        "data_error",
        "data-index-out-of-range",
    ),
    (
        "----> 4 x = batch[2][labels]\n\n"
        "IndexError: index 9 is out of bounds for dimension 0 with size 5",
        "data_error",
        "data-index-out-of-range",
    ),
    # Time limits in other words (h20F-*): a timeout decorator's builtins.TimeoutError,
    # submitit's requeue refusal, W&B's run start, Ascend's HCCL and stream timeouts.
    (
        "builtins.TimeoutError: Function mytest timed out after 5.0 seconds",
        "timeout",
        "distributed-time-limit",
    ),
    (
        "submitit.core.utils.UncompletedJobError: Job not requeued because: timed-out and not checkpointable.",
        "timeout",
        "distributed-time-limit",
    ),
    (
        "wandb.errors.errors.CommError: Run initialization has timed out after 90.0 sec. Please try "
        "increasing the timeout with the `init_timeout` setting",
        "timeout",
        "wandb-init-timeout",
    ),
    (
        "EI0002: [PID: 198748] The wait execution of the Notify register times out. Reason: The Notify "
        "register has not received the Notify record from remote rank: [unknown].",
        "timeout",
        "hccl-collective-timeout",
    ),
    (
        # Sticky since v24, as the NCCL watchdog's timeout.
        "EE1002: 2024-09-03-16:50:00.041.231 Stream synchronize timeout. rtDeviceSynchronize execute failed",
        "timeout",
        "hccl-collective-timeout",
    ),
    # Pool workers (h20G-*): RLlib's crashed worker, Dask's nanny with no memory line, a Ray
    # actor's fatal signal as the driver echoes it; vLLM naming no failed process is not one.
    (
        "(DQNTrainer pid=12200) WARNING trainer.py:546 -- Worker crashed during call to `step_attempt()`. "
        "To try to continue training without failed worker(s), set `ignore_worker_failures=True`.",
        "worker_lost",
        "pool-worker-lost",
    ),
    (
        "distributed.nanny - WARNING - Worker process 15662 was killed by unknown signal",
        "worker_lost",
        "pool-worker-lost",
    ),
    (
        "distributed.nanny - WARNING - Worker exceeded 95% memory budget.  Restarting\n"
        "distributed.nanny - WARNING - Worker process 22204 was killed by unknown signal",
        "host_oom",
        "dask-nanny-memory",
    ),
    (
        "(WorkerDict pid=124799) [2025-05-19 13:48:05,850 E 124799 140771] logging.cc:361: *** SIGABRT "
        "received at time=1747633685 on cpu 74 ***",
        "worker_lost",
        "pool-worker-lost",
    ),
    (
        "(RayWorkerWrapper pid=24036, ip=10.0.0.3) [2024-07-25 10:46:00,050 E 24036 24036] logging.cc:440: "
        "*** SIGSEGV received at time=1721904360 on cpu 140 ***",
        "worker_lost",
        "pool-worker-lost",
    ),
    (
        "[2024-07-25 10:46:00,050 E 24036 24036] logging.cc:440: *** SIGSEGV received at time=1721904360 on cpu 140 ***",
        "segfault",
        "text-crash",
    ),
    (
        "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}",
        "user_error",
        None,
    ),
    (
        "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): "
        "{'EngineCore_0': -9}",
        "worker_lost",
        "pool-worker-lost",
    ),
]


V21: list[Case] = [
    # XLA's pinned host buffers in the driver's OOM wording (h21A-craiyon-jax-pinned-host-oom)
    # are host memory; the same status for device memory stays oom.
    (
        "E external/org_tensorflow/tensorflow/stream_executor/cuda/cuda_driver.cc:802] failed to alloc "
        "1073741824 bytes on host: CUDA_ERROR_OUT_OF_MEMORY: out of memory",
        "host_oom",
        "xla-pinned-host-memory",
    ),
    (
        "W tensorflow/core/common_runtime/device/device_host_allocator.h:46] could not allocate pinned "
        "host memory of size: 1073741824",
        "host_oom",
        "xla-pinned-host-memory",
    ),
    (
        "E external/xla/xla/stream_executor/cuda/cuda_driver.cc:628] failed to alloc 8589934592 bytes on "
        "device: CUDA_ERROR_OUT_OF_MEMORY: out of memory",
        "oom",
        "cuda-out-of-memory",
    ),
    # XLA's stream left in an error state by a kernel fault (h21A-jax-stream-already-error-state).
    (
        "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: Failed to complete all kernels launched on stream "
        "0x557b78e02e40: stream did not block host until done; was already in an error state",
        "cuda_context_corrupted",
        "xla-stream-error-state",
    ),
    ("INTERNAL: the stream was already in an error state", "user_error", None),
    # cuDNN's version check in torch's spelling, two spaces and all (h21B-pytorch-ci-cudnn-
    # version-incompat).
    (
        "RuntimeError: cuDNN version incompatibility: PyTorch was compiled  against (8, 9, 2) but found "
        "runtime version (8, 8, 1). PyTorch already comes bundled with cuDNN.",
        "user_error",
        "cudnn-library-missing",
    ),
    # The watchdog's line wrapped by a terminal (h21C-csdn-watchdog-syserr) is still the
    # watchdog: sticky.
    (
        "Some NCCL operations have failed\n or timed out. Due to the asynchronous nature of CUDA kernels, "
        "subsequent GPU operations might run on corrupted/incomplete data.\n"
        "terminate called after throwing an instance of 'std::runtime_error'\n"
        "  what():  NCCL error: unhandled system error, NCCL version 2.10.3",
        "nccl",
        "nccl-async-abort",
    ),
    # An empty data set (h21D-chatglm-datasets-empty); another size is an index past the end.
    ("IndexError: Invalid key: 0 is out of bounds for size 0", "data_error", "data-shape-mismatch"),
    ("IndexError: Invalid key: 12 is out of bounds for size 10", "user_error", None),
    # func_timeout's exception (h21F-functimeout-raised).
    ("func_timeout.exceptions.FunctionTimedOut: bar", "timeout", "distributed-time-limit"),
    (
        "func_timeout.exceptions.FunctionTimedOut: Function train (args=()) (kwargs={}) timed out after 600.000000 seconds.",
        "timeout",
        "distributed-time-limit",
    ),
    # Dask's nanny warnings, then the user's Ctrl-C (h21F-dask-nanny-budget-then-ctrlc, the
    # wrong prune): interrupted; alone, or before the pool's KilledWorker, host memory; below a
    # plain data error raised in the trial.
    (
        "distributed.nanny - WARNING - Worker exceeded 95% memory budget. Restarting\n"
        "distributed.nanny - WARNING - Restarting worker\nKeyboardInterrupt: ",
        "interrupted",
        "keyboard-interrupt",
    ),
    (
        "distributed.nanny - WARNING - Worker exceeded 95% memory budget. Restarting",
        "host_oom",
        "dask-nanny-memory",
    ),
    (
        "distributed.nanny - WARNING - Worker exceeded 95% memory budget. Restarting\n"
        "distributed.scheduler.KilledWorker: ('train-123', <WorkerState 'tcp://127.0.0.1:4000', status: closed>)",
        "host_oom",
        "dask-nanny-memory",
    ),
    (
        "distributed.nanny - WARNING - Worker exceeded 95% memory budget. Restarting\n"
        "ValueError: Found input variables with inconsistent numbers of samples: [100, 99]",
        "data_error",
        "data-shape-mismatch",
    ),
    # Pool workers' fatal signals (h21G-*): Julia's "From worker N:", a Ray actor's
    # faulthandler line, xgboost_ray's actor status, torchelastic's event log; DataLoader's FPE
    # is a worker's native crash like its segfault; subprocess's exit 139.
    (
        "      From worker 3:    signal (6): Aborted\n      From worker 3:    in expression starting at none:0",
        "worker_lost",
        "pool-worker-lost",
    ),
    ("signal (6): Aborted\nin expression starting at none:0", "segfault", "text-crash"),
    (
        "(WorkerDict pid=129668) Fatal Python error: Floating point exception\n(WorkerDict pid=129668) \n"
        "(WorkerDict pid=129668) Stack (most recent call first):",
        "worker_lost",
        "pool-worker-lost",
    ),
    (
        "Fatal Python error: Floating point exception\n\nStack (most recent call first):",
        "segfault",
        "text-crash",
    ),
    (
        "(pid=40067, ip=172.31.118.130) INFO elastic.py:156 -- Actor status: 7 alive, 1 dead (8 total)",
        "worker_lost",
        "elastic-actor-dead",
    ),
    ("INFO elastic.py:156 -- Actor status: 8 alive, 0 dead (8 total)", "user_error", None),
    (
        '{"name": "torchelastic.worker.status.FAILED", "source": "WORKER", "timestamp": 0, "metadata": '
        '{"run_id": "none", "global_rank": 3, "raw_error": "{\\"message\\": \\"<NONE>\\"}"}}',
        "worker_lost",
        "child-failed",
    ),
    (
        '{"name": "torchelastic.worker.status.SUCCEEDED", "source": "WORKER", "timestamp": 0}',
        "user_error",
        None,
    ),
    (
        "ERROR: Unexpected floating-point exception encountered in worker.",
        "segfault",
        "dataloader-worker-segfault",
    ),
    (
        "subprocess.CalledProcessError: Command 'python -m evals.run' returned non-zero exit status 139.",
        "segfault",
        "text-crash",
    ),
    (
        "subprocess.CalledProcessError: Command 'python -m evals.run' returned non-zero exit status 1.",
        "worker_lost",
        "child-failed",
    ),
]


V22: list[Case] = [
    # torchrun over the child's own error (h22C-singularity-*): the child's OSError or bare
    # Exception decides; torch.multiprocessing's own bare Exception for a dead child does not.
    (
        "OSError: [Errno 24] Too many open files\n"
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
        "Root Cause (first observed failure):\n  exitcode  : 1 (pid: 1370613)",
        "user_error",
        None,
    ),
    (
        "Exception: Unknown manipulation type\n"
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
        "Root Cause (first observed failure):\n  exitcode  : 1 (pid: 2057526)",
        "user_error",
        None,
    ),
    (
        "Exception: process 0 terminated with exit code 1",
        "worker_lost",
        "child-failed",
    ),
    # torch.save's writer failing mid-file (h22A-spdistiller-ckpt-write) is the disk's.
    (
        "RuntimeError: [enforce fail at inline_container.cc:778] . PytorchStreamWriter failed writing "
        "file data/3: file write failed",
        "user_error",
        "disk-full",
    ),
    # vLLM's KV cache check (h22A-laguna-kvcache-mem): GPU memory the settings need.
    (
        "ValueError: To serve at least one request with the model's max seq len (262144), (18.35 GiB KV "
        "cache is needed, which is larger than the available KV cache memory (8.72 GiB).",
        "oom",
        "cuda-out-of-memory",
    ),
    (
        "ValueError: The model's max seq len (32768) is larger than the maximum number of tokens that can "
        "be stored in KV cache (20512). Try increasing `gpu_memory_utilization` or decreasing `max_model_len`",
        "oom",
        "cuda-out-of-memory",
    ),
    (
        "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` "
        "when initializing the engine.",
        "oom",
        "cuda-out-of-memory",
    ),
    # TensorFlow 1's failed stream sync (h22B-tfmnist-gpu-sync-failed): sticky, below its cause.
    ("InternalError: GPU sync failed", "cuda_context_corrupted", "xla-stream-error-state"),
    (
        "E tensorflow/stream_executor/cuda/cuda_driver.cc:1032] failed to synchronize the stop event: "
        "CUDA_ERROR_OUT_OF_MEMORY: out of memory\nInternalError: GPU sync failed",
        "oom",
        "cuda-out-of-memory",
    ),
    # NVML's driver/library mismatch under NCCL (h22C-fgdcc-nccl-nvml-mismatch).
    (
        "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system "
        "error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5\nncclSystemError: System call "
        "(e.g. socket, malloc) or external library call failed or device error.\nLast error:\n"
        "nvmlInit_v2() failed: Driver/library version mismatch",
        "device_unavailable",
        "cuda-driver-mismatch",
    ),
    # torch.linalg's finiteness check (h22C-nowag-linalg-eig-nan).
    (
        "RuntimeError: torch.linalg.eig: input tensor should not contain infs or NaNs.",
        "numerical",
        "numerical-nonfinite",
    ),
    # PBS Pro's resource report with the wall time used up (h22C-gadi-pbs-walltime-sigterm);
    # the same report before the limit is no time limit (with the signal passed, interrupted).
    (
        "   Exit Status:        271 (Linux Signal 15 SIGTERM Termination)\n"
        "   Walltime requested: 15:00:00            Walltime Used: 15:01:13        ",
        "timeout",
        "distributed-time-limit",
    ),
    (
        "   Exit Status:        271 (Linux Signal 15 SIGTERM Termination)\n"
        "   Walltime requested: 20:00:00            Walltime Used: 00:16:02        ",
        "user_error",
        None,
    ),
]


# A review of the v19-v21 cues (a helper that read the rule diff, not a held-out file) probed
# them with look-alikes; each case below was a wrong verdict before the fix.
REVIEW_V21: list[Case] = [
    # XLA's pinned host warning is one the allocator goes on after: below what follows it.
    (
        "W ./tensorflow/core/common_runtime/gpu/pool_allocator.h:195] could not allocate pinned host memory "
        "of size: 8589934592\ntorch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1269, "
        "unhandled system error, NCCL version 2.14.3",
        "nccl",
        "nccl-error",
    ),
    (
        "W ./tensorflow/core/common_runtime/gpu/pool_allocator.h:195] could not allocate pinned host memory "
        "of size: 8589934592\nslurmstepd: error: *** JOB 1234 ON node1 CANCELLED AT 2024-01-01T00:00:00 "
        "DUE TO TIME LIMIT ***",
        "timeout",
        "distributed-time-limit",
    ),
    (
        "E external/xla/xla/stream_executor/cuda/cuda_driver.cc:802] failed to alloc 1073741824 bytes on "
        "host: CUDA_ERROR_OUT_OF_MEMORY: out of memory\nValueError: could not convert string to float: 'x'",
        "data_error",
        "data-label-format",
    ),
    # Theano's pool set-up failing, after which it runs on the CPU, is no out-of-memory failure.
    (
        "ERROR (theano.sandbox.cuda): ERROR: Not using GPU. Initialisation of device gpu failed:\n"
        "initCnmem: cnmemInit call failed! Reason=CNMEM_STATUS_OUT_OF_MEMORY. numdev=1\n"
        "TypeError: unsupported operand type(s) for +: 'Tensor' and 'str'",
        "user_error",
        None,
    ),
    # Dask's nanny warning yields to a plain error the trial raised after it.
    (
        "distributed.nanny.memory - WARNING - Worker tcp://127.0.0.1:40123 (pid=4242) exceeded 95% memory "
        "budget. Restarting...\nTypeError: unsupported operand type(s) for +: 'Tensor' and 'str'",
        "user_error",
        None,
    ),
    # The CUDA samples' cue stays on one line.
    (
        "Cuda error in file 'x.cu' in line 9 : invalid argument\n: out of memory warnings follow",
        "user_error",
        None,
    ),
    # torch's cuDNN plan warning is below whatever failure follows it.
    (
        "conv.py:456: UserWarning: Plan failed with a cudnnException: CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR: cudnnFinalize Descriptor Failed cudnn_status: CUDNN_STATUS_NOT_SUPPORTED\n"
        + "Loss is nan, stopping training",
        "numerical",
        "numerical-nonfinite",
    ),
    (
        "conv.py:456: UserWarning: Plan failed with a cudnnException: CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR: cudnnFinalize Descriptor Failed cudnn_status: CUDNN_STATUS_NOT_SUPPORTED\n"
        + "RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x3 and 4x5)",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        "conv.py:456: UserWarning: Plan failed with a cudnnException: CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR: cudnnFinalize Descriptor Failed cudnn_status: CUDNN_STATUS_NOT_SUPPORTED\n"
        + "RuntimeError: Expected all tensors to be on the same device, but found at least two devices",
        "user_error",
        "user-device-mismatch",
    ),
    (
        "conv.py:456: UserWarning: Plan failed with a cudnnException: CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR: cudnnFinalize Descriptor Failed cudnn_status: CUDNN_STATUS_NOT_SUPPORTED\n"
        + "slurmstepd: error: *** JOB 7 ON n1 CANCELLED AT 2024-01-01T00:00:00 DUE TO TIME LIMIT ***",
        "timeout",
        "distributed-time-limit",
    ),
    (
        "conv.py:456: UserWarning: Plan failed with a cudnnException: CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR: cudnnFinalize Descriptor Failed cudnn_status: CUDNN_STATUS_NOT_SUPPORTED\n"
        + "KeyboardInterrupt",
        "interrupted",
        "keyboard-interrupt",
    ),
    (
        "conv.py:456: UserWarning: Plan failed with a cudnnException: CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR: cudnnFinalize Descriptor Failed cudnn_status: CUDNN_STATUS_NOT_SUPPORTED\n"
        + "Segmentation fault (core dumped)",
        "segfault",
        "text-crash",
    ),
    # XLA's stream error state is below the out-of-memory or NCCL error that caused it.
    (
        "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate "
        "4294967296 bytes.\nINTERNAL: Failed to complete all kernels launched on stream 0x1: stream did not "
        "block host until done; was already in an error state",
        "oom",
        "cuda-out-of-memory",
    ),
    # W&B's init timeout is below a Ctrl-C or a crash after it.
    (
        "wandb: ERROR Run initialization has timed out after 90.0 sec.\n"
        "wandb: Tracking run with wandb version 0.16.0\nKeyboardInterrupt",
        "interrupted",
        "keyboard-interrupt",
    ),
    (
        "wandb: ERROR Run initialization has timed out after 90.0 sec.\nFatal Python error: Segmentation fault",
        "segfault",
        "text-crash",
    ),
    # An elastic training's dead actor yields to a plain error after it.
    (
        "(RayXGBoost) Actor status: 3 alive, 1 dead (4 total)\nValueError: bad config key: lr2",
        "user_error",
        None,
    ),
    # Julia's worker stopped by SIGINT or SIGTERM is no crash.
    ("      From worker 3:    signal (2): Interrupt", "user_error", None),
]


# v23's misses, fixed when it joined training: a library's finiteness check in its own words,
# one class in the labels, class-probability targets given as Long, annotations outside the
# image, LightGBM's other spelling of a label past its range, a model's own shape assertion, a
# library's error raised before a launcher's report, and an NCCL error before the watchdog's
# timeout. Each with a look-alike that must not change.
V23: list[Case] = [
    (
        "ValueError: Residuals are not finite in the initial point.",
        "numerical",
        "numerical-nonfinite",
    ),
    ("ValueError: Axis limits cannot be NaN or Inf", "numerical", "numerical-nonfinite"),
    ("ValueError: `x0` is not finite.", "numerical", "numerical-nonfinite"),
    # Not a finiteness check.
    ("ValueError: the space is not finite-dimensional", "user_error", None),
    ("# residuals are not finite in the initial point", "user_error", None),
    (
        "ValueError: The target 'y' needs to have more than 1 class. Got 1 class instead",
        "data_error",
        "data-label-format",
    ),
    (
        "ValueError: This solver needs samples of at least 2 classes in the data, but the data "
        "contains only one class: 0",
        "data_error",
        "data-label-format",
    ),
    (
        "ValueError: Only one class present in y_true. ROC AUC score is not defined in that case.",
        "data_error",
        "data-label-format",
    ),
    (
        "RuntimeError: Expected floating point type for target with class probabilities, got Int",
        "data_error",
        "data-label-format",
    ),
    (
        "ValueError: In YOLO format all coordinates must be float and in range (0, 1], got "
        "[[0.5, 1.2, 0.1, 0.1, 0.0]]",
        "data_error",
        "data-label-format",
    ),
    (
        "ValueError: Expected x_max for bbox (0.1, 0.2, 1.05, 0.5, 3) to be in the range "
        "[0.0, 1.0], got 1.05.",
        "data_error",
        "data-label-format",
    ),
    (
        "lightgbm.basic.LightGBMError: b'label (31) excel the max range 31'",
        "data_error",
        "data-target-out-of-bounds",
    ),
    ("AssertionError: incorrect audio shape", "data_error", "data-shape-mismatch"),
    # A dtype mismatch raised in backward is the loss's target's; in forward, the code's.
    (
        '  File "/usr/lib/python3.7/site-packages/torch/autograd/__init__.py", line 100, in '
        "backward\n    allow_unreachable=True)  # allow_unreachable flag\nRuntimeError: expected "
        "dtype Double but got dtype Float (validate_dtype at /pytorch/aten/src/ATen/native/"
        "TensorIterator.cpp:143)",
        "data_error",
        "data-label-format",
    ),
    (
        '  File "/opt/conda/lib/python3.10/site-packages/torch/autograd/__init__.py", line 200, '
        "in backward\n    Variable._execution_engine.run_backward(  # Calls into the C++ engine "
        "to run the backward pass\nRuntimeError: Found dtype Double but expected Float",
        "data_error",
        "data-label-format",
    ),
    (
        '  File "train.py", line 12, in forward\n    return self.fc(x)\nRuntimeError: expected '
        "dtype Double but got dtype Float",
        "user_error",
        None,
    ),
    # An assertion about something else is the code's.
    ("AssertionError: invalid config: shape_fn missing", "user_error", None),
    # A library's own error, then the launcher's report that the child failed: the error decides.
    (
        "wandb.errors.UsageError: api_key not configured (no-tty). call wandb.login(key=[your_api_key])\n"
        "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 "
        "(pid: 1234) of binary: /usr/bin/python\n"
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n"
        "  exitcode  : 1 (pid: 1234)",
        "user_error",
        None,
    ),
    # The launcher's report alone, or with torch.distributed's own error: no cause named.
    (
        "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 "
        "(pid: 1234) of binary: /usr/bin/python\n"
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n"
        "  exitcode  : 1 (pid: 1234)",
        "worker_lost",
        "child-failed",
    ),
    (
        "torch.distributed.elastic.rendezvous.api.RendezvousError: The node's state was not "
        "updated\nERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) "
        "local_rank: 0 (pid: 1234) of binary: /usr/bin/python\n"
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:",
        "worker_lost",
        "child-failed",
    ),
    # An NCCL error, lines before the watchdog's timeout: the error came first.
    (
        "RuntimeError: NCCL Error 3: internal error - please report this issue to the NCCL "
        "developers\nW1013 11:12:31.439000 api.py:900] Sending process 2750548 closing signal "
        "SIGTERM\n[rank18]:[E1013 ProcessGroupNCCL.cpp:746] [Rank 18] Some NCCL operations have "
        "failed or timed out.\n[rank18]:[E1013 ProcessGroupNCCL.cpp:760] [Rank 18] To avoid data "
        "inconsistency, we are taking the entire process down.\n[rank18]:[E1013 "
        "ProcessGroupNCCL.cpp:2068] [Rank 18] Process group watchdog thread terminated with "
        "exception: [Rank 18] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=420, "
        "OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600071 "
        "milliseconds before timing out.",
        "nccl",
        "nccl-error-before-watchdog",
    ),
    # The timeout first, then the error it caused: the timeout decides.
    (
        "[rank1]:[E ProcessGroupNCCL.cpp:2068] [Rank 1] Watchdog caught collective operation "
        "timeout: WorkNCCL(SeqNum=7, OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600071 "
        "milliseconds before timing out.\ntorch.distributed.DistBackendError: NCCL error in: "
        "../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, remote process exited or "
        "there was a network error, NCCL version 2.20.5",
        "timeout",
        "nccl-watchdog-timeout",
    ),
]


# v24's misses, fixed when it joined training, each with other wordings and look-alikes: vLLM's
# start-up memory check, cuBLAS's status string under a log prefix, darknet's cuDNN check,
# TensorFlow's loaded-versus-built cuDNN (user_error, a convention written down after v24),
# Ascend's HCCL (set-up errors nccl, collective timeouts sticky, link set-up a peer's timeout), a
# server's start-up limit, the kernel's older OOM-killer wording, labels and categories the model
# has not seen, feature counts, R's length check, NaN checks in a library's own words, an RL
# return gone NaN, a frame line whose start the excerpt cut, Ray Tune's stop, Ray's raylet, a
# pool death after what its worker printed, and source lines that name a type the code handles.
V24: list[Case] = [
    (
        "[multiproc_executor.py:492] ValueError: Free memory on device (7.10/23.64 GiB) on startup "
        "is less than desired GPU memory utilization (0.90, 21.28 GiB). Decrease GPU memory "
        "utilization or reduce GPU memory used by other processes.",
        "oom",
        "cuda-out-of-memory",
    ),
    (
        "ggml/src/ggml-cuda/ggml-cuda.cu:106: CUDA error\n0.16.061.889 E CUDA error: the requested "
        "functionality is not supported\n0.16.061.894 E   current device: 0, in function "
        "ggml_cuda_mul_mat_cublas_impl at ggml/src/ggml-cuda/ggml-cuda.cu:1548",
        "cublas",
        "cublas-status",
    ),
    (
        "cuBLAS call cublasLtMatmul(handle, desc, alpha, A, a_desc, B, b_desc) failed at "
        "cublaslt_utils.cc:120 'an internal operation failed'",
        "cublas",
        "cublas-status",
    ),
    (
        "cuDNN status Error in: file: ./src/convolutional_layer.c : () : line: 293 : build time: "
        "Feb 13 2019 - 13:54:47",
        "cudnn",
        "cudnn-status",
    ),
    (
        "E tensorflow/stream_executor/cuda/cuda_dnn.cc:359] Loaded runtime CuDNN library: 8.0.4 but "
        "source was compiled with: 8.1.0. CuDNN library needs to have matching major version and "
        "equal or higher minor version.\nUNKNOWN: Failed to get convolution algorithm. This is "
        "probably because cuDNN failed to initialize, so try looking to see if a warning log "
        "message was printed above.",
        "user_error",
        "cudnn-library-missing",
    ),
    (
        "E0123 caffe2/core/common_cudnn.h:80] cuDNN compiled (7102) and runtime (7605) versions "
        "mismatch",
        "user_error",
        "cudnn-library-missing",
    ),
    # Without a version line, TensorFlow's handle failure stays cuDNN's.
    (
        "UnknownError: Failed to get convolution algorithm. This is probably because cuDNN failed "
        "to initialize, so try looking to see if a warning log message was printed above.",
        "cudnn",
        "cudnn-not-initialized",
    ),
    (
        "[ERROR] HCCL(36035,mindie):2025-05-13-02:25:58.068.817 [op_base.cc:974][Init]"
        "[CommRootInfoConfig]errNo[0x0000000005000002]HcclCommInitRootInfo failed.",
        "nccl",
        "nccl-error",
    ),
    (
        "RuntimeError: create_config:compiler_depend.ts:102 HCCL function error: "
        "hcclCommInitRootInfoConfig(numRanks, &rootInfo, rank, config, &(comm->hcclComm_)), error "
        "code is 15",
        "nccl",
        "nccl-error",
    ),
    (
        "RuntimeError: [ERROR] HCCL error in: torch_npu/csrc/distributed/ProcessGroupHCCL.cpp:64\n"
        "[ERROR] 2024-05-21-11:57:54 (PID:927000, Device:3, RankID:3) ERR02200 DIST call hccl api "
        "failed.",
        "nccl",
        "nccl-error",
    ),
    (
        "EI0002: The wait execution of the Notify register times out. Reason: The Notify register "
        "has not received the Notify record from remote rank [3].",
        "timeout",
        "hccl-collective-timeout",
    ),
    (
        "[ERROR] HCCL(1,python3):2026-03-18-10:33:52.113.403 [hccl_socket_manager.cc:797] [Wait]"
        "[LinkEstablish]wait socket establish timeout, role[1] rank[1] timeout[120 s]",
        "timeout",
        "distributed-store-timeout",
    ),
    (
        "Error: timed out waiting for llama runner to start - progress 0.00 -",
        "timeout",
        "distributed-time-limit",
    ),
    # Not a start-up limit.
    ("Error: timed out waiting for the server to respond", "user_error", None),
    (
        "[ 5315.537822] Out of memory: Kill process 6341 (python) score 846 or sacrifice child",
        "host_oom",
        "host-memory-monitor",
    ),
    (
        "CatBoostError: catboost/private/libs/target/target_converter.cpp:64: Unknown class name: "
        '"24.0"',
        "data_error",
        "data-target-out-of-bounds",
    ),
    (
        "LightGBMError: Label must be in [0, 4), but found 4 in label",
        "data_error",
        "data-target-out-of-bounds",
    ),
    (
        "ValueError: Found unknown categories ['wedding'] in column 3 during transform",
        "data_error",
        "data-label-format",
    ),
    (
        "ValueError: Incorrect number of features. Got 128 features, expected 384",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        "ValueError: Number of features of the model must  match the input. Model n_features is 7 "
        "and  input n_features is 11",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        "Error in `brulee_chronos_bridge()`:\n! `item_id` has length 199 but `y` has length 200.",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        "ValueError: NaNs detected in inputs, please correct or drop.",
        "numerical",
        "numerical-nonfinite",
    ),
    (
        "RuntimeError: NaN detected in latents: C:\\aa\\image\\1.png",
        "numerical",
        "numerical-nonfinite",
    ),
    (
        "ValueError: There should be no NaNs in the encoded x and y.",
        "numerical",
        "numerical-nonfinite",
    ),
    # A check that passed; a column named for the user to fix (not a detection wording).
    ("INFO: no NaN detected in inputs", "user_error", None),
    ("ValueError: Found NaN in column 'age'", "user_error", None),
    (
        "Early stopping occurred at epoch 1 due to numerical overflow of the loss function.",
        "numerical",
        "numerical-nonfinite",
    ),
    (
        "[TRAINING] Epi     51, Total Steps    10200, Epi Steps =     200, Return =        nan, "
        "FPS :   294.0548",
        "numerical",
        "numerical-logged-return",
    ),
    ("episode 12 reward: nan", "numerical", "numerical-logged-return"),
    ("    return nan_to_num(x)", "user_error", None),
    (
        'DefectSegNet/cnn_dataloader.py", line 131, in desegment_output\n    each_im_size = '
        "np.size(output[targets[0]][0])\nIndexError: index 0 is out of bounds for axis 0 with size 0",
        "user_error",
        "user-dim-argument",
    ),
    (
        "2022-11-01 17:17:36 WARNING tune.py:716 -- Stop signal received (e.g. via SIGINT/Ctrl+C), "
        "ending Ray Tune run.\nray.exceptions.RayActorError: The actor died unexpectedly before "
        "finishing this task.",
        "interrupted",
        "keyboard-interrupt",
    ),
    (
        "2022-10-05 10:30:47,443 ERROR agent.py:217 -- Raylet is terminated: ip=172.29.58.148, "
        "id=d2a5. Termination is unexpected. Possible reasons include: (1) SIGKILL by the user or "
        "system OOM killer",
        "worker_lost",
        "pool-worker-lost",
    ),
    ("[Thu, 19 May 2011 18:26:00 GMT] ERROR worker 3 died", "worker_lost", "pool-worker-lost"),
    # A pool's worker printed a failure, then the pool reported its death last: the worker's
    # failure is not the trial process's (labelling conventions).
    (
        "RuntimeError: CUDA error: unspecified launch failure\njoblib.externals.loky.process_executor."
        "TerminatedWorkerError: A worker process managed by the executor was unexpectedly "
        "terminated. The exit codes of the workers are {}",
        "worker_lost",
        "pool-worker-lost",
    ),
    (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\nconcurrent.futures."
        "process.BrokenProcessPool: A process in the process pool was terminated abruptly while "
        "the future was running or pending.",
        "worker_lost",
        "pool-worker-lost",
    ),
    # The trial's process failed after the pool died: its own error decides. Nothing died when
    # a result failed to un-serialize. A hardware fault concerns the GPU whoever saw it.
    (
        "joblib.externals.loky.process_executor.TerminatedWorkerError: A worker process managed by "
        "the executor was unexpectedly terminated.\nRuntimeError: CUDA error: an illegal memory "
        "access was encountered",
        "cuda_context_corrupted",
        "cuda-illegal-memory-access",
    ),
    (
        "concurrent.futures.process.BrokenProcessPool: A task has failed to un-serialize. Please "
        "ensure that the arguments of the function are all picklable.",
        "user_error",
        "pool-result-unpicklable",
    ),
    (
        "RuntimeError: CUDA error: uncorrectable ECC error encountered\njoblib.externals.loky."
        "process_executor.TerminatedWorkerError: A worker process managed by the executor was "
        "unexpectedly terminated.",
        "cuda_context_corrupted",
        "cuda-ecc-uncorrectable",
    ),
    # A source line naming a type the code handles is not the error raised.
    (
        '  File "pool.py", line 653, in get\n    raise TimeoutError\nKeyboardInterrupt',
        "interrupted",
        "keyboard-interrupt",
    ),
    (
        '  File "pool.py", line 653, in get\n    raise TimeoutError\nTimeoutError',
        "timeout",
        "distributed-time-limit",
    ),
]


# v25's misses, fixed when it joined training: a kernel for newer GPUs only, Ascend device ids
# past the count, HCCL's configuration errors and task and socket timeouts, MindSpore's unique-id
# timeout, numpy's concatenation of arrays of different shapes, labels of the wrong shape,
# CatBoost's binary border, Beam's and Open MPI's dead workers, a task's crash as srun and Open
# MPI report it, and torch's start-up warning that CUDA could not be initialised.
V25: list[Case] = [
    (
        "    2048   4096  64 128  2048  ERROR: RuntimeError('IndexerForward requires SM100+ compute "
        "capability, found SM9')",
        "device_unavailable",
        "cuda-no-kernel-image",
    ),
    (
        "RuntimeError: Device 8 call rtSetDevice failed, ret[107001].\nEE1001: The argument is "
        "invalid.Reason: Set device failed, invalid device, set device=8, valid device range is "
        "[0, 8)",
        "device_unavailable",
        "cuda-invalid-device-ordinal",
    ),
    (
        "Call aclrtSetDevice failed, ret[107001]. Got device count[8] and device id[9], please "
        "check if device id is valid.",
        "device_unavailable",
        "cuda-invalid-device-ordinal",
    ),
    (
        "EI0005: The arguments for collective communication are inconsistent between ranks:tag"
        "[HcomAllReduce_1], parameter[count], local[16512], remote [8320]",
        "nccl",
        "nccl-error",
    ),
    (
        "EI0004: The ranktable is invalid,Reason:[The ranktable config devId is inconsistent with "
        "the local devId.].",
        "nccl",
        "nccl-error",
    ),
    (
        "[ERROR] HCCL(858209,all_reduce_test):2025-12-10-19:52:32.589.097 [task_exception_handler"
        ".cc:27] [858274][TaskExecStage][Timeout][HOST]Task run failed, base information is "
        "streamID:[1740]",
        "timeout",
        "hccl-collective-timeout",
    ),
    (
        "EI0006: Getting socket times out. Reason: 1. The remote does not initiate a connect "
        "request.",
        "timeout",
        "distributed-store-timeout",
    ),
    (
        "RuntimeError: Communicator of group xxx inited: failed. Result: Init communicator for "
        "group xxx exception info: Failed to fetch the unique id of the collective lib from the "
        "meta server node. Maybe the root rank process of this group has exited",
        "timeout",
        "distributed-store-timeout",
    ),
    (
        "ValueError: all the input arrays must have same number of dimensions, but the array at "
        "index 0 has 3 dimension(s) and the array at index 1 has 1 dimension(s)",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        "ValueError: all the input array dimensions except for the concatenation axis must match "
        "exactly, but along dimension 1, the array at index 0 has size 3 and the array at index 1 "
        "has size 4",
        "data_error",
        "data-shape-mismatch",
    ),
    ("ValueError: bad input shape (105, 2)", "data_error", "data-label-format"),
    (
        "ValueError: y should be a 1d array, got an array of shape (105, 2) instead.",
        "data_error",
        "data-label-format",
    ),
    (
        "CatboostError: catboost/libs/algo/train_model.cpp:109: All targets are greater than border",
        "data_error",
        "data-label-format",
    ),
    (
        "Error encountered with the status channel: There are 5 consecutive failures obtaining SDK "
        "worker status info. SDK worker appears to be dead. Aborting SDK sdk-0-0_sibling_25",
        "worker_lost",
        "pool-worker-lost",
    ),
    (
        "A daemon (pid unknown) died unexpectedly with status 1 while attempting\nto launch so we "
        "are aborting.",
        "worker_lost",
        "pool-worker-lost",
    ),
    # A task's crash named by srun or Open MPI beats the step's cancel that follows it; the
    # cancel alone is a stop from outside.
    (
        "srun: error: cgpu09: task 0: Aborted\nsrun: Terminating job step 418426.0\n0: slurmstepd: "
        "error: *** STEP 418426.0 ON cgpu09 CANCELLED AT 2020-01-29T13:55:18 ***\nsrun: error: "
        "cgpu09: task 1: Terminated",
        "segfault",
        "text-crash",
    ),
    (
        "[cgpu09:43722] *** Process received signal ***\n[cgpu09:43722] Signal: Segmentation fault "
        "(11)\n[cgpu09:43722] Signal code: Address not mapped (1)",
        "segfault",
        "text-crash",
    ),
    (
        "slurmstepd: error: *** STEP 418426.0 ON cgpu09 CANCELLED AT 2020-01-29T13:55:18 ***\n"
        "srun: error: cgpu09: task 1: Terminated",
        "interrupted",
        "text-interrupted",
    ),
    # torch's start-up warning that CUDA could not be initialised: it goes on on the CPU, so
    # the objective's own error decides; alone, it is the device; raised, it is the device.
    (
        "/usr/lib/python3.9/site-packages/torch/cuda/__init__.py:141: UserWarning: CUDA "
        "initialization: The NVIDIA driver on your system is too old (found version 11040).\n"
        "  return torch._C._cuda_getDeviceCount() > 0\nValueError: not enough values to unpack "
        "(expected 6, got 3)",
        "user_error",
        None,
    ),
    (
        "UserWarning: CUDA initialization: Found no NVIDIA driver on your system.\nTypeError: "
        "unsupported operand type(s) for +: 'int' and 'str'",
        "user_error",
        None,
    ),
    (
        "/usr/lib/python3.9/site-packages/torch/cuda/__init__.py:141: UserWarning: CUDA "
        "initialization: The NVIDIA driver on your system is too old (found version 11040).\n"
        "  return torch._C._cuda_getDeviceCount() > 0",
        "device_unavailable",
        "device-fallback-warning",
    ),
    (
        "RuntimeError: The NVIDIA driver on your system is too old (found version 11040). Please "
        "update your GPU driver",
        "device_unavailable",
        "cuda-driver-mismatch",
    ),
    (
        "RuntimeError: CUDA initialization: CUDA unknown error - this may be due to an incorrectly "
        "set up environment",
        "device_unavailable",
        "cuda-init-failed",
    ),
]


# A review of the v23-v25 rules (a helper that read the rule diff, not the corpus) found these;
# each is fixed and stays fixed. Wrong prunes first.
REVIEW_V25: list[Case] = [
    # An RL return or reward logged as NaN is weak evidence (loops print NaN means before any
    # episode finished): the objective's error, a crash or a launcher's report decides.
    (
        "Iteration 0: mean return = nan, episodes = 0\nTraceback (most recent call last):\n  File "
        "\"x.py\", line 1, in <module>\nAttributeError: 'NoneType' object has no attribute 'shape'",
        "user_error",
        None,
    ),
    ("return: nan\nIllegal instruction (core dumped)", "segfault", "text-crash"),
    (
        "[rank0]: step 0 return: nan\ntorch.distributed.elastic.multiprocessing.errors."
        "ChildFailedError: \n  exitcode  : 1",
        "worker_lost",
        "child-failed",
    ),
    ("[eval] episode 3 reward=nan", "numerical", "numerical-logged-return"),
    # A connection's or a peer's error after a yielding line is its consequence, not the
    # objective's own error: the nanny, the stop signal, the launcher decide.
    (
        "distributed.nanny.memory - WARNING - Worker tcp://127.0.0.1:40123 (pid=4242) exceeded 95% "
        "memory budget. Restarting...\ndistributed.comm.core.CommClosedError: in <TCP (closed) "
        "ConnectionPool.gather local=x remote=y>: Stream is closed\ndistributed.scheduler."
        "KilledWorker: Attempted to run task ('fit-123', 0) on 3 different workers, but all those "
        "workers died while running it.",
        "host_oom",
        "dask-nanny-memory",
    ),
    (
        "*** SIGTERM received at time=1716400000 on cpu 12 ***\nPC: @ 0x7f pthread_cond_wait\n"
        "BrokenPipeError: [Errno 32] Broken pipe",
        "interrupted",
        "signal-handler-stop",
    ),
    (
        "torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to the "
        "C10d store has failed.\nERROR:torch.distributed.elastic.multiprocessing.api:failed "
        "(exitcode: 1) local_rank: 0 (pid: 1) of binary: /usr/bin/python\n"
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:",
        "worker_lost",
        "child-failed",
    ),
    (
        "ConnectionResetError: [Errno 104] Connection reset by peer\ntorch.multiprocessing.spawn."
        "ProcessExitedException: process 1 terminated with exit code 1",
        "worker_lost",
        "child-failed",
    ),
    # An NCCL error first decides only when nothing named a CUDA fault or an OOM before it
    # (then the rules as before: the watchdog's timeout); HCCL's error before its timeout too.
    (
        "[rank0]: RuntimeError: CUDA error: an illegal memory access was encountered\n[rank0]: "
        "torch.distributed.DistBackendError: NCCL error in: ../NCCLUtils.hpp:275, unhandled cuda "
        "error\n[rank0]:[E ProcessGroupNCCL.cpp:2068] [Rank 0] Watchdog caught collective "
        "operation timeout: WorkNCCL(SeqNum=7) ran for 600071 milliseconds before timing out.",
        "timeout",
        "nccl-watchdog-timeout",
    ),
    (
        "RuntimeError: HCCL error in: torch_npu/csrc/distributed/ProcessGroupHCCL.cpp:64\nEI0002: "
        "The wait execution of the Notify register times out. Reason: x",
        "nccl",
        "nccl-error-before-watchdog",
    ),
    # "Stream synchronize timeout" is HCCL's only in Ascend's wording.
    (
        "RuntimeError: CUDA error: an illegal memory access was encountered\nStream synchronize "
        "timeout",
        "cuda_context_corrupted",
        "cuda-illegal-memory-access",
    ),
    # NaN checks on labels are missing data, not divergence; Optuna's constraint check is the
    # constraints function's bug.
    ("ValueError: NaNs found in labels. Please drop or impute missing values.", "user_error", None),
    ("ValueError: Constraint values cannot be NaN.", "user_error", None),
    # torch's warning in c10's form yields too.
    (
        "[W CUDAFunctions.cpp:108] Warning: CUDA initialization: The NVIDIA driver on your system is "
        "too old (found version 11040). (function operator())\nValueError: bad",
        "user_error",
        None,
    ),
    # A handler on a source line names no failure (torch < 1.13 has no torch.cuda.OutOfMemoryError).
    (
        'Traceback (most recent call last):\n  File "obj.py", line 12, in objective\n    except '
        "torch.cuda.OutOfMemoryError:\nAttributeError: module 'torch.cuda' has no attribute "
        "'OutOfMemoryError'",
        "user_error",
        None,
    ),
    ("torch.cuda.OutOfMemoryError raised in step 3", "oom", "cuda-out-of-memory"),
    # Open MPI's daemon with status 127: its command was not found, an installation problem.
    (
        "A daemon (pid unknown) died unexpectedly with status 127 while attempting\nto launch so we "
        "are aborting.",
        "user_error",
        None,
    ),
]


# v26's misses, each with a variant and a look-alike that must not move.
V26: list[Case] = [
    # AWS Neuron's runtime: devices that cannot come up, cores held elsewhere, an old driver.
    (
        "2023-Jan-05 10:01:02.0001 4242:4242 ERROR   NRT:nrt_init                                "
        "Failed to initialize devices, error:1",
        "device_unavailable",
        "cuda-init-failed",
    ),
    (
        "2022-Mar-02 11:22:33.0444 1111:1111 ERROR   NRT:nrt_allocate_neuron_cores               "
        "NeuronCore(s) not available - Requested:nc0-nc3 Available:2",
        "device_unavailable",
        "cuda-device-busy",
    ),
    (
        "ERROR   NRT:nrt_init      This runtime requires Neuron Driver version 2.3 or greater. "
        "Please upgrade aws-neuron-dkms package.",
        "device_unavailable",
        "cuda-driver-mismatch",
    ),
    # Device memory: Neuron's HBM, Ascend's NPU memory.
    (
        "ERROR  TDRV:log_dev_mem                             Failed to allocate 512.000MB "
        "(alignment: 4KB, usage: scratchpad) on ND 1:NC 0",
        "oom",
        "cuda-out-of-memory",
    ),
    (
        "rtMalloc execute failed, reason=[driver error:out of memory][FUNC:ReportError]",
        "oom",
        "cuda-out-of-memory",
    ),
    (
        "RuntimeError: mindspore/ccsrc/runtime/device/ascend/ascend_memory_manager.cc:62 "
        "MallocDeviceMemory] Malloc device memory failed, size[1073741824], ret[207001]",
        "oom",
        "cuda-out-of-memory",
    ),
    # Host memory in the same words is not device memory.
    ("MemoryError: Failed to allocate 4.000GB on host", "host_oom", "host-allocator-failed"),
    # Guards that stop a diverged run: GluonTS's loss check, MindSpore's gradient-norm guard.
    (
        "GluonTSDataError: Encountered invalid loss value! Try reducing the learning rate or try "
        "a different likelihood.",
        "numerical",
        "numerical-nonfinite",
    ),
    (
        "ValueError: Current global norm [1203.5] of step 40 has been 3 consecutive times greater "
        "than threshold 10.0, stop training...",
        "numerical",
        "numerical-nonfinite",
    ),
    # A config naming an unknown loss is the code's, not a non-finite value.
    ("ValueError: Invalid loss function 'hinge2'", "user_error", None),
    # VS Code's notebook kernel died with no cause named.
    (
        "The Kernel crashed while executing code in the current cell or a previous cell. \n"
        "Please review the code in the cell(s) to identify a possible cause of the failure.",
        "worker_lost",
        "pool-worker-lost",
    ),
    # numpy's matrix products with shapes that do not fit.
    (
        "ValueError: shapes (64,10) and (12,1) not aligned: 10 (dim 1) != 12 (dim 0)",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        "ValueError: matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc "
        "signature (n?,k),(k,m?)->(n?,m?) (size 3 is different from 2)",
        "data_error",
        "data-shape-mismatch",
    ),
    # An extension that did not compile, re-raised by a pool: the code's, not a lost child.
    (
        "subprocess.CalledProcessError: Command '['ninja', '-v']' returned non-zero exit status "
        "1.\n\nThe above exception was the direct cause of the following exception:\n\n"
        "RuntimeError: Error building extension 'fused_adam'",
        "user_error",
        "user-extension-build-failed",
    ),
    # glibc's abort at exit after a Python error: the error decides; alone it is a crash.
    (
        "psycopg2.OperationalError: could not connect to server\nFATAL: exception not rethrown\n"
        "run.sh: line 2:    11 Aborted                 (core dumped) python3 -u main.py",
        "user_error",
        None,
    ),
    (
        "FATAL: exception not rethrown\nAborted (core dumped)",
        "segfault",
        "abort-exception-not-rethrown",
    ),
    # A CUDA fault before the abort still decides.
    (
        "RuntimeError: CUDA error: an illegal memory access was encountered\nFATAL: exception "
        "not rethrown\nAborted (core dumped)",
        "cuda_context_corrupted",
        "cuda-illegal-memory-access",
    ),
]


# v27's misses, each with a variant and, where a cue could overreach, a look-alike.
V27: list[Case] = [
    # Intel GPUs and Vulkan lose the context after a GPU reset: sticky, a fresh process works.
    (
        "RuntimeError: level_zero backend failed with error: 20 (UR_RESULT_ERROR_DEVICE_LOST)",
        "cuda_context_corrupted",
        "accelerator-device-lost",
    ),
    (
        "terminate called after throwing an instance of 'vk::DeviceLostError'\n  what():  "
        "vk::Queue::submit: ErrorDeviceLost",
        "cuda_context_corrupted",
        "accelerator-device-lost",
    ),
    # NVIDIA's GPU that fell off the bus stays a lost device.
    ("NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus.", "device_unavailable", "gpu-lost"),
    # Accelerator memory in other vendors' words.
    ("RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB", "oom", "cuda-out-of-memory"),
    ("RuntimeError: MLU out of memory. Tried to allocate 512.00 MiB", "oom", "cuda-out-of-memory"),
    (
        "RuntimeError: [Rank:0] FATAL ERROR :: MODULE:PT_DEVMEM Allocation failed for "
        "size::1073741824 (1024)MB",
        "oom",
        "cuda-out-of-memory",
    ),
    (
        "[HAMI-core ERROR (pid:9 thread=1 allocator.c:115)]: cuMemoryAllocate failed res=2",
        "oom",
        "cuda-out-of-memory",
    ),
    # HAMi's other statuses are not memory.
    (
        "[HAMI-core ERROR (pid:9 thread=1 allocator.c:115)]: cuMemoryAllocate failed res=1",
        "user_error",
        None,
    ),
    (
        "[ERROR] RecentErrMsg: Memory_Allocation_Failure(EL0004): Failed to allocate memory.",
        "oom",
        "cuda-out-of-memory",
    ),
    # libfabric's "Cannot allocate memory" is a locked-memory limit NCCL reports, not host RAM;
    # elsewhere the same words are host memory.
    (
        "libfabric:1:1::efa:cq:efa_cq_open():92<warn> Unable to create extended CQ: Cannot "
        "allocate memory\nalgo-1:1:2 [5] nccl_net_ofi_create_plugin:259 NCCL WARN NET/OFI "
        "aws-ofi-nccl initialization failed",
        "nccl",
        "nccl-error",
    ),
    ("OSError: [Errno 12] Cannot allocate memory", "host_oom", "host-allocator-failed"),
    (
        "OSError : The paging file is to small for this operation to complete.",
        "host_oom",
        "host-allocator-failed",
    ),
    # Memory monitors of batch systems and worker pools.
    (
        "ERROR:RetryJob Job killed by HTCondor due to excessive memory use (RSS=2250 MB). Will "
        "not retry it.",
        "host_oom",
        "host-memory-monitor",
    ),
    (
        "Job has gone over cgroup memory limit of 4096 megabytes. Peak usage: 4100 megabytes.",
        "host_oom",
        "host-memory-monitor",
    ),
    (
        "[WARNING] (MainProcess) PID:60 <engine> Process: Worker_3 (PID: 201) killed because it "
        "exceeded the memory limit: 2147483648.",
        "host_oom",
        "host-memory-monitor",
    ),
    # MIOpen, ROCm's cuDNN.
    (
        "MIOpen Error: /MIOpen/src/ocl/convolutionocl.cpp:831: Forward Convolution cannot be "
        "executed due to incorrect params",
        "cudnn",
        "cudnn-status",
    ),
    ("RuntimeError: miopenStatusUnknownError", "cudnn", "cudnn-status"),
    # Library statuses given by number are read as their names.
    (
        "ERROR: cuda/cudaConvolutionLayer.cpp (163) - Cudnn Error in execute: 8",
        "cudnn",
        "cudnn-execution-failed",
    ),
    (
        "DefaultLogger ../rtSafe/safeContext.cpp (110) - cuBLAS Error in initializeCommonContext: "
        "3 (Could not initialize cublas, please check cuda installation.)",
        "oom",
        "cuda-library-alloc-failed",
    ),
    (
        "cudnnFindConvolutionForwardAlgorithm failed: \t2\t convDesc=[mode : CUDNN_CONVOLUTION]",
        "oom",
        "cuda-library-alloc-failed",
    ),
    (
        "cudnnFindConvolutionForwardAlgorithm failed: \t9\t convDesc=[mode : CUDNN_CONVOLUTION]",
        "cudnn",
        "cudnn-status",
    ),
    # A cuDNN that lacks a function is an installation problem, before the abort.
    (
        "F tensorflow/stream_executor/cuda/cuda_dnn.cc:207] could not find cudnnCreate in cudnn "
        "DSO; dlerror: undefined symbol: cudnnCreate\nAborted (core dumped)",
        "user_error",
        "cudnn-library-missing",
    ),
    # Collectives: Gloo's transport, HCCL, oneCCL, CuPy.
    (
        "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed by "
        "peer [127.0.0.1]:10895",
        "nccl",
        "gloo-peer-lost",
    ),
    (
        "RuntimeError: [/opt/gloo/transport/tcp/pair.cc:589] Read error [10.0.0.2]:25266: "
        "Connection reset by peer",
        "nccl",
        "gloo-peer-lost",
    ),
    # Gloo's timeouts stay timeouts.
    (
        "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by "
        "peer [10.0.0.3]:4242\nRuntimeError: [/gloo/transport/tcp/unbound_buffer.cc:84] Timed out "
        "waiting 1800000ms for recv operation to complete",
        "timeout",
        "distributed-time-limit",
    ),
    (
        "F20251111 collective_service.cpp:37] Check failed: status == HCCL_SUCCESS (7 vs. 0) "
        "HCCL comm init failed.",
        "nccl",
        "nccl-error",
    ),
    (
        "[ERROR] HCCL(925892,alltoall_test):2025-10-28-16:34:59.634.432 [sal.cc:501] set ifname "
        "to [abc] by HCCL_SOCKET_IFNAME, but not found in the environment",
        "nccl",
        "nccl-error",
    ),
    (
        "2023:11:28-16:35:45:(35980) |CCL_ERROR| exec.cpp:134 start_workers: condition failed\n"
        "RuntimeError: oneCCL: exec.cpp:134 start_workers: EXCEPTION: failed to start worker # 0",
        "nccl",
        "nccl-error",
    ),
    (
        '  File "cupy_backends/cuda/libs/nccl.pyx", line 117, in '
        "cupy_backends.cuda.libs.nccl.NcclError.__init__\nKeyError: 6",
        "nccl",
        "nccl-error",
    ),
    # Timeouts: Ascend's device synchronise and FFTS+ tasks (sticky), bootstrap sockets (not).
    (
        "RuntimeError: npuSynchronizeDevice:compiler_depend.ts:479 NPU function error: "
        "AclrtSynchronizeDeviceWithTimeout, error code is 507048",
        "timeout",
        "hccl-collective-timeout",
    ),
    (
        "EI9999: Inner Error! hccl fftsplus task timeout occurred, stuck notify num:1",
        "timeout",
        "hccl-collective-timeout",
    ),
    (
        "bootstrap.cc:88 socketStartConnect: exceeded timeouts (3)",
        "timeout",
        "distributed-store-timeout",
    ),
    (
        "[W socket.cpp:697] [c10d] The client socket has failed to connect to 10.0.0.1:29500 "
        "(errno: 110 - Connection timed out).\n[E socket.cpp:753] [c10d] The client socket has "
        "failed to connect to any network address of (node1, 29500).",
        "timeout",
        "distributed-store-timeout",
    ),
    # (Review: the retry warning alone is no failure; what follows decides.)
    (
        "[W socket.cpp:697] [c10d] The client socket has failed to connect to 10.0.0.1:29500 "
        "(errno: 110 - Connection timed out).\nEpoch 3: loss = nan",
        "numerical",
        "numerical-nonfinite",
    ),
    # A refused connection is no timeout.
    (
        "[W socket.cpp:697] [c10d] The client socket has failed to connect to 10.0.0.1:29500 "
        "(errno: 111 - Connection refused).",
        "user_error",
        None,
    ),
    # Divergence guards: ODE solvers, a policy's scale sampled after it went NaN.
    ("AssertionError: underflow in dt nan", "numerical", "numerical-nonfinite"),
    ("AssertionError: underflow in dt 1e-17", "user_error", None),
    (
        "AssertionError: non-finite values in state `y`: tensor([nan, 0.5])",
        "numerical",
        "numerical-nonfinite",
    ),
    (
        '  File "/env/lib/python3.10/site-packages/torch/distributions/normal.py", line 73, in '
        "sample\n    return torch.normal(self.loc.expand(shape), self.scale.expand(shape))\n"
        "RuntimeError: normal expects all elements of std >= 0.0",
        "numerical",
        "numerical-nonfinite",
    ),
    # torch.normal called by the code with a bad std is the code's.
    (
        '  File "model.py", line 12, in __init__\n    w = torch.normal(mu, sigma)\n'
        "RuntimeError: normal expects all elements of std >= 0.0",
        "user_error",
        None,
    ),
    # A float overflow in exp() is a diverged score; in a schedule's power it is the code's.
    (
        "    z = 1.0/(1.0+exp(x))\nOverflowError: math range error",
        "numerical",
        "numerical-nonfinite",
    ),
    (
        "    sigma = min(self.tau_max, (self.tau_max ** (self.n / self.N)))\nOverflowError: (34, "
        "'Numerical result out of range')",
        "user_error",
        None,
    ),
    (
        "rbf.py:43: RuntimeWarning:overflow encountered in square | |\nstationary.py:167: "
        "RuntimeWarning:invalid value encountered in divide | |",
        "numerical",
        "numerical-numpy-warnings",
    ),
    (
        "cholesky.py:38: NumericalWarning: A not p.d., added jitter of 1.0e-04 to the diagonal\n"
        "  warnings.warn(\nTraceback (most recent call last):\n    loss = -mll(output, y)",
        "numerical",
        "numerical-jitter-exhausted",
    ),
    # (Review: the last jitter often works and the run goes on; a later crash decides.)
    (
        "NumericalWarning: A not p.d., added jitter of 1.0e-04 to the diagonal\n  warnings.warn(\n"
        "Epoch 12 done\nSegmentation fault (core dumped)",
        "segfault",
        "text-crash",
    ),
    # (Review: a config naming an invalid loss; only GluonTS's own words are divergence.)
    ("ValueError: Invalid loss value. Accepted (as string): 'l1'/'l2'", "user_error", None),
    # (Review: Gloo's peer loss yields to what named the cause.)
    (
        "RuntimeError: [/gloo/transport/tcp/pair.cc:534] Connection closed by peer [10.0.0.2]:1\n"
        "KeyboardInterrupt",
        "interrupted",
        "keyboard-interrupt",
    ),
    (
        "RuntimeError: [C:/gloo/transport/uv/pair.cc:333] Connection closed by peer [10.0.0.2]:1",
        "nccl",
        "gloo-peer-lost",
    ),
    ("[LightGBM] [Fatal] [CUDA] out of memory", "oom", "cuda-out-of-memory"),
    # The first jitter alone is routine; a plain error after the warnings decides.
    (
        "cholesky.py:38: NumericalWarning: A not p.d., added jitter of 1.0e-06 to the diagonal",
        "user_error",
        None,
    ),
    (
        "NumericalWarning: A not p.d., added jitter of 1.0e-04 to the diagonal\nKeyError: 'lr'",
        "user_error",
        None,
    ),
    # YOLO's label check.
    (
        "AssertionError: Label class 15 exceeds nc=2 in data/ships.yaml. Possible class labels "
        "are 0-1",
        "data_error",
        "data-target-out-of-bounds",
    ),
    # Stops from outside: Julia, W&B's sweep agent, DeepSpeed's runner, a preempted Ray node.
    (
        "fatal: error thrown and no exception handler available.\nInterruptException()",
        "interrupted",
        "text-interrupted",
    ),
    ("wandb.wandb_agent - INFO - Agent received command: stop", "interrupted", "text-interrupted"),
    (
        '  File "/opt/conda/lib/python3.8/site-packages/deepspeed/launcher/runner.py", line 548, '
        "in sigkill_handler\n    result_kill = subprocess.Popen(kill_cmd, env=env)\nNameError: "
        "free variable 'kill_cmd' referenced before assignment in enclosing scope",
        "interrupted",
        "text-interrupted",
    ),
    (
        "(TrainController pid=1) The actor died because its node has died.\n(TrainController "
        "pid=1) \tthe actor's node was preempted: simulating node drain",
        "interrupted",
        "ray-node-preempted",
    ),
    # Without a cause named, the actor's death is a lost worker.
    (
        "(TrainController pid=1) The actor died unexpectedly before finishing this task.",
        "worker_lost",
        "pool-worker-lost",
    ),
    # Pools and lost nodes.
    ("[ERROR] Worker (pid:54) was sent code 139!", "worker_lost", "pool-worker-lost"),
    ("Worker process died unexpectedly", "worker_lost", "pool-worker-lost"),
    (
        '  File "/usr/lib/python2.7/dist-packages/billiard/pool.py", line 961, in '
        "_join_exited_workers\n    raise Terminated(-exitcodes[worker_pid])\nTerminated: 9",
        "worker_lost",
        "pool-worker-lost",
    ),
    (
        "message='Worker terminated with exit code not 0, but  143'",
        "worker_lost",
        "pool-worker-lost",
    ),
    ("salloc: error: Node failure on worker-1", "worker_lost", "slurm-node-failed"),
    ("[gw0] Slave 'gw0' crashed while running 'test_x'", "worker_lost", "pool-worker-lost"),
    (
        "(pid=91480, ip=172.31.76.62) *** SIGSEGV received at time=1626321279 on cpu 2 ***",
        "worker_lost",
        "pool-worker-lost",
    ),
    # Native crashes on Windows and a thrust launch failure.
    (
        "Exception Code: 0xC0000005\n #1 at::cuda::_int_mm() (torch_hip.dll+0x2646a6d)",
        "segfault",
        "text-crash",
    ),
    ("OSError: exception: access violation reading 0x00000000000000AB", "segfault", "text-crash"),
    (
        "terminate called after throwing an instance of 'thrust::system::system_error'\n  what():  "
        "unspecified launch fail and had some problems.\nAborted (core dumped)",
        "cuda_context_corrupted",
        "cuda-unspecified-launch-failure",
    ),
    # The profiler in CUDA mode with DataLoader workers: the code's, before the terminate.
    (
        "terminate called after throwing an instance of 'std::runtime_error'\nwhat(): "
        "../torch/csrc/autograd/profiler_cuda.cpp:36: CUDA initialization error. This can occur",
        "user_error",
        "user-cuda-after-fork",
    ),
    # LightGBM's fatal check before its terminate; alone it still names the check.
    (
        "[LightGBM] [Fatal] Check failed: num_machines > 1 at serial_tree_learner.cpp, line 876 .\n"
        "terminate called after throwing an instance of 'std::runtime_error'",
        "user_error",
        "lightgbm-fatal",
    ),
    # An objective's own check that no GPU is usable.
    (
        "RuntimeError: CUDA is not available. Ensure that a GPU is available and properly "
        "configured.",
        "device_unavailable",
        "cuda-no-device",
    ),
    # (Advice in prose is not the error.)
    ("If CUDA is not available, the script falls back to the CPU.", "user_error", None),
]


# v28's misses, each with a variant and, where a cue could overreach, a look-alike.
V28: list[Case] = [
    # Ascend NPU kernel faults are sticky, as CUDA's.
    (
        "RuntimeError: operator():compiler_depend.ts:25 NPU function error: "
        "c10_npu::acl::AclrtSynchronizeStreamWithTimeout(copy_stream), error code is 507035",
        "cuda_context_corrupted",
        "npu-kernel-fault",
    ),
    (
        "[ERROR] aclrtSynchronizeStream(stream) failed: 507015 (main.cpp:108)",
        "cuda_context_corrupted",
        "npu-kernel-fault",
    ),
    (
        "The error from device(chipId:4, dieId:0), serial number is 1, there is an exception of "
        "fftsplus aicore error, core id is 4",
        "cuda_context_corrupted",
        "npu-kernel-fault",
    ),
    (
        "Kernel task happen error, retCode=0x31, [vector core exception].",
        "cuda_context_corrupted",
        "npu-kernel-fault",
    ),
    # Its task timeout stays a timeout.
    (
        "RuntimeError: NPU function error: AclrtSynchronizeDeviceWithTimeout, error code is 507048",
        "timeout",
        "hccl-collective-timeout",
    ),
    # Device memory: Ascend's driver, ggml's allocator, torch's allocator warning, TF 1's graph.
    (
        "[ERROR] DRV(1,python3):2021 [ascend][drv][devmm][devmm_ioctl_alloc_dev 247]<errno:12, 6> "
        "advise mem error! ret=6",
        "oom",
        "cuda-out-of-memory",
    ),
    (
        "ggml_gallocr_reserve_n: failed to allocate CUDA0 buffer of size 21773256964",
        "oom",
        "cuda-out-of-memory",
    ),
    (
        "[W CUDACachingAllocator.cpp:3933] memory allocation failed with OOM on device 0 while "
        "trying to allocate 20971520 bytes",
        "oom",
        "cuda-allocator-oom-warning",
    ),
    (
        "(0) Resource exhausted: failed to allocate memory\n\t [[{{node dense/MatMul}}]]",
        "oom",
        "cuda-out-of-memory",
    ),
    (
        "(0) Resource exhausted: failed to allocate memory on /job:localhost/replica:0/task:0/"
        "device:CPU:0",
        "user_error",
        None,
    ),
    (
        "RuntimeError: CUDA error: HIPBLAS_STATUS_ALLOC_FAILED when calling `hipblasCreate(handle)`",
        "oom",
        "cuda-library-alloc-failed",
    ),
    # Context creation out of memory: the OOM, not the consequence that no device is usable.
    (
        "failed call to cuDevicePrimaryCtxRetain: CUDA_ERROR_OUT_OF_MEMORY: out of memory\n"
        "F tensorflow/stream_executor/lib/statusor.cc:34] Attempting to fetch value instead of "
        "handling error Internal: no supported devices found for platform CUDA\nFatal Python "
        "error: Aborted",
        "oom",
        "cuda-out-of-memory",
    ),
    (
        "Internal: no supported devices found for platform CUDA",
        "device_unavailable",
        "xla-no-cuda-device",
    ),
    # ROCm that cannot start, HIP without the GPU's code objects, rocBLAS's Tensile library.
    (
        "Call returned HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to allocate the "
        "necessary resources.",
        "device_unavailable",
        "cuda-init-failed",
    ),
    (
        "hip_platform.cpp:110 : Cannot retrieve Static function, error: 218\nAborted (core dumped)",
        "device_unavailable",
        "cuda-no-kernel-image",
    ),
    (
        "rocBLAS error: Could not load /opt/rocm/lib/rocblas/library/TensileLibrary_lazy_gfx1030."
        "dat",
        "device_unavailable",
        "cuda-no-kernel-image",
    ),
    # Libraries: cuDNN's version, GROMACS's cuFFT, CUDA's own messages by code.
    (
        "RuntimeError: cuDNN error: CUDNN_STATUS_VERSION_MISMATCH",
        "user_error",
        "cudnn-library-missing",
    ),
    (
        "Fatal error:\ncufftPlanMany R2C plan failure (error code 5)",
        "cublas",
        "cuda-math-library-status",
    ),
    (
        "what():  [CUDA] Error: cannot set while device is active in this process",
        "user_error",
        "code:cudaErrorSetOnActiveProcess",
    ),
    (
        "torch.AcceleratorError: CUDA error: file not found",
        "user_error",
        "code:cudaErrorFileNotFound",
    ),
    # A Triton kernel XLA could not launch: a configuration, not a dead context.
    (
        "XlaRuntimeError: INTERNAL: Failed to launch CUDA kernel: triton_gemm_dot_0 with block "
        "dimensions: 128x1x1: CUDA_ERROR_INVALID_VALUE: invalid argument",
        "user_error",
        "user-kernel-launch-config",
    ),
    # Collectives: Gloo's full mesh, MPI's fatal errors, PSM3.
    (
        "RuntimeError: Gloo connectFullMesh failed with [/gloo/transport/tcp/pair.cc:144] no error",
        "nccl",
        "gloo-peer-lost",
    ),
    (
        "RuntimeError: Gloo connectFullMesh failed with [../gloo/transport/tcp/pair.cc:144] "
        "Connect timeout [10.0.0.1]:1234",
        "timeout",
        "distributed-store-timeout",
    ),
    (
        "Abort(2138767) on node 0: Fatal error in PMPI_Init: Unknown error class, error stack:",
        "nccl",
        "nccl-error",
    ),
    (
        "machine:rank1: Assertion failure at psm3/ptl_am/ptl.c:196: nbytes == req->len",
        "nccl",
        "nccl-error",
    ),
    (
        "E base_collective_executor.cc:249] BaseCollectiveExecutor::StartAbort DEADLINE_EXCEEDED: "
        "Deadline Exceeded\nFatal Python error: Aborted",
        "timeout",
        "distributed-store-timeout",
    ),
    # Divergence: sampling from NaN probabilities, int() of NaN, BCE on NaN.
    (
        "RuntimeError: probability tensor contains either inf\n, nan\nor element < 0",
        "numerical",
        "numerical-nonfinite",
    ),
    ("ValueError: cannot convert float NaN to integer", "numerical", "numerical-nonfinite"),
    (
        "Assertion `x >= 0. && x <= 1.' failed. input value should be between 0~1, but got nan at "
        "BCECriterion.c:62",
        "numerical",
        "numerical-nonfinite",
    ),
    # A negative probability is the code's: logits given to BCELoss.
    (
        "Assertion `x >= 0. && x <= 1.' failed. input value should be between 0~1, but got "
        "-1.000000 at BCECriterion.c:62",
        "user_error",
        "user-loss-input-range",
    ),
    # Data: labels sklearn prints whole, empty sets, a dataset's bounds, TF's label asserts.
    ("ValueError: Unknown label type: (0    1\n1    2", "data_error", "data-label-format"),
    (
        "ValueError: With n_samples=0, test_size=0.3 and train_size=None, the resulting train set "
        "will be empty.",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        "ValueError: Cannot have number of splits n_splits=10 greater than the number of samples: "
        "0.",
        "data_error",
        "data-shape-mismatch",
    ),
    # Ten splits of five samples is the code's choice of n_splits.
    (
        "ValueError: Cannot have number of splits n_splits=10 greater than the number of samples: "
        "5.",
        "user_error",
        None,
    ),
    (
        "IndexError: Index -889 out of bounds for dataset with length 967",
        "data_error",
        "data-index-out-of-range",
    ),
    (
        "W op_kernel.cc:936] Invalid argument: indices[0] = [0,755] is out of bounds: need 0 <= "
        "index < [32,5]",
        "data_error",
        "data-index-out-of-range",
    ),
    (
        "InvalidArgumentError: assertion failed: [] [Condition x == y did not hold element-wise:] "
        "[x (loss/SparseSoftmaxCrossEntropyWithLogits/Shape_1:0) = ] [101 1]",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        "[labels out of bound] [Condition x < y did not hold element-wise:] [x (mean_iou/"
        "confusion_matrix/control_dependency:0) = ] [3 3 3...]",
        "data_error",
        "data-target-out-of-bounds",
    ),
    # A literal index inside a fancy-index list on the user's own line is the code's.
    (
        '  File "/home/u/yolo3/utils.py", line 109, in get_random_data\n    box[:, [0,2]] = '
        "box[:, [0,2]]*nw/iw + dx\nIndexError: index 2 is out of bounds for axis 1 with size 1",
        "user_error",
        "user-dim-argument",
    ),
    # Pools: billiard's terminated worker in Celery's words, Spark's Akka-era executors.
    (
        '  File "billiard/pool.py", line 1678, in _set_terminated\n    raise '
        "Terminated(-(signum or 0))\nTerminated: -15",
        "worker_lost",
        "pool-worker-lost",
    ),
    (
        "ERROR TaskSchedulerImpl: Lost executor 0 on h05u09.int: remote Akka client disassociated",
        "worker_lost",
        "pool-worker-lost",
    ),
    # glibc's TLS failure printed by a dying Ray actor is the pool's death, not a host OOM.
    (
        "(pid=1) cannot allocate memory for thread-local data: ABORT\n"
        "ray.exceptions.RayActorError: The actor died unexpectedly before finishing this task.",
        "worker_lost",
        "pool-worker-lost",
    ),
    ("OSError: [Errno 12] Cannot allocate memory", "host_oom", "host-allocator-failed"),
]


# The second review (of the v28 rules): cues that had pruned what they should not.
REVIEW_V28: list[Case] = [
    # torch's allocator warning is not fatal (it frees its cache and retries): a later error
    # decides; alone it is still the OOM.
    (
        "[W CUDACachingAllocator.cpp:3933] memory allocation failed with OOM on device 0 while "
        "trying to allocate 20971520 bytes\nKeyError: 'labels'",
        "user_error",
        None,
    ),
    (
        "[W CUDACachingAllocator.cpp:3933] memory allocation failed with OOM on device 0 while "
        "trying to allocate 20971520 bytes",
        "oom",
        "cuda-allocator-oom-warning",
    ),
    # int() of a NaN in a Dataset's __getitem__ is a missing value in the data.
    (
        '  File "/app/data.py", line 40, in __getitem__\n    label = int(row["label"])\n'
        "ValueError: cannot convert float NaN to integer",
        "data_error",
        "data-nan-in-loader",
    ),
    # Host buffers and CPU devices are not device memory.
    (
        "ggml_gallocr_reserve_n: failed to allocate CPU buffer of size 1073741824",
        "user_error",
        None,
    ),
    (
        "(0) Resource exhausted: failed to allocate memory\n\t [[{{node x}} = Add[T=DT_FLOAT, "
        '_device="/job:localhost/replica:0/task:0/device:CPU:0"]]',
        "user_error",
        None,
    ),
    # MPI's misuse by the code is the code's; its start-up and transport failures stay nccl.
    (
        "Fatal error in PMPI_Recv: Message truncated, error stack:\nPMPI_Recv(171): "
        "MPI_Recv(buf=0x1, count=1, MPI_INT, src=0, tag=0, MPI_COMM_WORLD) failed",
        "user_error",
        None,
    ),
    ("Fatal error in PMPI_Send: Invalid rank, error stack:", "user_error", None),
    (
        "Abort(1) on node 0: Fatal error in PMPI_Init: Other MPI error, error stack:",
        "nccl",
        "nccl-error",
    ),
    # TensorFlow before 2.11 spells the collective deadline in words.
    (
        "E base_collective_executor.cc:217] BaseCollectiveExecutor::StartAbort Deadline "
        "exceeded: Collective ops is aborted by: ...",
        "timeout",
        "distributed-store-timeout",
    ),
    # ROCm's queue aborting for lack of resources is a crash of the run, not a runtime that
    # could not start.
    (
        ":0:rocdevice.cpp:2982: Callback: Queue 0x7f aborting with error : "
        "HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to allocate the necessary "
        "resources.\nAborted (core dumped)",
        "segfault",
        "text-crash",
    ),
]


# Every table above, one case each: the class and the rule that decides (a sticky class stays
# sticky).
V29: list[Case] = [
    # Slurm's accounting (seff, sacct) and node failure; Ray's raylet; numpy; sklearn's folds;
    # packed sequences; C++ argument errors before an abort.
    (
        "slurmstepd: error: *** STEP 7871129.0 ON nid001520 CANCELLED AT 2024-10-23T20:04:10 DUE TO NODE FAILURE ***",
        "worker_lost",
        "slurm-node-failed",
    ),
    (
        "slurmstepd: error: *** JOB 1234 ON gpu-07 CANCELLED AT 2025-01-02T03:04:05 DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS ***",
        "worker_lost",
        "slurm-node-failed",
    ),
    ("State: NODE_FAIL (exit code 0)", "worker_lost", "slurm-accounting-node-fail"),
    (
        "4242424      train.sh      gpu    01:02:03   NODE_FAIL",
        "worker_lost",
        "slurm-accounting-node-fail",
    ),
    (
        "ray.exceptions.LocalRayletDiedError: The task's local raylet died. Check raylet.out for more information.",
        "worker_lost",
        "pool-worker-lost",
    ),
    ("Job ID: 1234567\nState: TIMEOUT\nCores: 4", "timeout", "slurm-accounting-timeout"),
    ("State: TIMEOUT (exit code 0)", "timeout", "slurm-accounting-timeout"),
    (
        "1234567          train.sh       4   01:00:00   TIMEOUT",
        "timeout",
        "slurm-accounting-timeout",
    ),
    (
        "1234567_3.batch  batch          4   01:00:00   TIMEOUT ",
        "timeout",
        "slurm-accounting-timeout",
    ),
    ("State: CANCELLED (exit code 0)", "interrupted", "slurm-accounting-cancelled"),
    (
        "31060451.batch  batch                2    00:00:48    00:33.547          102048K CANCELLED  ",
        "interrupted",
        "slurm-accounting-cancelled",
    ),
    (
        "31060451        example_job.sl       2    00:00:48    00:33.548      1G          CANCELLED by 5021",
        "interrupted",
        "slurm-accounting-cancelled",
    ),
    (
        "31060451        example_job.sl       2    00:00:48  CANCELLED+",
        "interrupted",
        "slurm-accounting-cancelled",
    ),
    ("State: PREEMPTED (exit code 0)", "interrupted", "slurm-accounting-cancelled"),
    (
        "88812345      hpo.sh     gpu   00:10:00   PREEMPTED",
        "interrupted",
        "slurm-accounting-cancelled",
    ),
    ("State: OUT_OF_MEMORY (exit code 0)", "host_oom", "slurm-accounting-oom"),
    ("5551234.batch   batch   1   00:05:12   OUT_OF_ME+", "host_oom", "slurm-accounting-oom"),
    (
        "ValueError: n_splits=5 cannot be greater than the number of members in each class.",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        "RuntimeError: Expected `len(lengths)` to be equal to batch_size, but got 3 (batch_size=8)",
        "data_error",
        "data-shape-mismatch",
    ),
    (
        "terminate called after throwing an instance of 'std::invalid_argument'\n  what():  stoi\nAborted (core dumped)",
        "user_error",
        "user-cpp-argument-error",
    ),
    (
        "terminate called after throwing an instance of 'std::out_of_range'\n  what():  vector::_M_range_check: __n (which is 5) >= this->size() (which is 5)\nAborted (core dumped)",
        "user_error",
        "user-cpp-argument-error",
    ),
    (
        "terminate called after throwing an instance of 'sycl::_V1::invalid_object_error'\n  what():  The device does not have the ext_intel_free_memory aspect -33 (PI_ERROR_INVALID_DEVICE)",
        "user_error",
        "user-cpp-argument-error",
    ),
    (
        "1234567      train.sh        gpu    myacct          4    TIMEOUT      0:0",
        "timeout",
        "slurm-accounting-timeout",
    ),
    (
        "1234567.0    python                 myacct          4  CANCELLED     0:15",
        "interrupted",
        "slurm-accounting-cancelled",
    ),
    ("20240501 run 12 TIMEOUT", "user_error", None),
    # Look-alikes: other states, a log line that starts with a number, other C++ causes.
    ("State: COMPLETED (exit code 0)", "user_error", None),
    ("State: FAILED (exit code 1)", "user_error", None),
    ("1234567          train.sh       4   01:00:00   COMPLETED", "user_error", None),
    ("2024-05-01 12:00:00 request TIMEOUT", "user_error", None),
    ("20240501 worker heartbeat TIMEOUT", "user_error", None),
    (
        "terminate called after throwing an instance of 'std::runtime_error'\n  what():  internal error\nAborted (core dumped)",
        "segfault",
        "text-crash",
    ),
    (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\nterminate called after throwing an instance of 'std::out_of_range'\n  what():  map::at",
        "oom",
        "cuda-out-of-memory",
    ),
    (
        "terminate called after throwing an instance of 'std::invalid_argument'\n  what():  CUDA error: an illegal memory access was encountered",
        "cuda_context_corrupted",
        "cuda-illegal-memory-access",
    ),
    ("LinAlgError: Matrix is not positive definite", "numerical", "numerical-nonfinite"),
    # A singular inverse or solve stays the code's (as table v12b says).
    ("LinAlgError: Singular matrix", "user_error", None),
    (
        "ValueError: The least populated class in y has only 1 members, which is less than n_splits=5.",
        "user_error",
        None,
    ),
    (
        "ray.exceptions.RaySystemError: System error: Failed to connect to raylet",
        "user_error",
        None,
    ),
    (
        "*** JOB 1234 ON gpu-07 CANCELLED AT 2025-01-02T03:04:05 ***",
        "interrupted",
        "text-interrupted",
    ),
    (
        "*** JOB 1234 ON gpu-07 CANCELLED AT 2025-01-02T03:04:05 DUE TO TIME LIMIT ***",
        "timeout",
        "distributed-time-limit",
    ),
]


V30: list[Case] = [
    # dlib's CUDA check; Gloo's connect; vLLM's engine core; indices (old torch's, a literal
    # followed by slices).
    (
        "Error while calling cudaMalloc(&data, new_size*sizeof(float)) in file /home/u/dlib/dlib/cuda/gpu_data.cpp:218. code: 2, reason: out of memory",
        "oom",
        "cuda-out-of-memory",
    ),
    (
        "Error while calling cudaMalloc(&backward_data_workspace, backward_data_workspace_size_in_bytes) in file dlib/dnn/cudnn_dlibapi.cpp:908. code: 2, reason: out of memory",
        "oom",
        "cuda-out-of-memory",
    ),
    (
        "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:799] connect [10.0.0.2]:35000: Connection refused",
        "nccl",
        "gloo-peer-lost",
    ),
    (
        "RuntimeError: [/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:799] connect [127.0.1.1]:4567: No route to host",
        "nccl",
        "gloo-peer-lost",
    ),
    (
        "vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace (above) for the root cause.",
        "worker_lost",
        "vllm-engine-dead",
    ),
    (
        "(APIServer pid=1) ERROR 02-23 18:49:03 [serving_chat.py:1343] vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace (above) for the root cause.",
        "worker_lost",
        "vllm-engine-dead",
    ),
    (
        "RuntimeError: index 15 is out of bounds for dim with size 2",
        "data_error",
        "data-index-out-of-range",
    ),
    (
        '  File "train.py", line 168, in trainer_synapse\n    image = image_batch[1, 0:1, :, :]\nIndexError: index 1 is out of bounds for dimension 0 with size 1',
        "user_error",
        "user-dim-argument",
    ),
    (
        '  File "eval.py", line 20, in main\n    x = preds[0, 3]\nIndexError: index 3 is out of bounds for dimension 1 with size 3',
        "user_error",
        "user-dim-argument",
    ),
    # Look-alikes: a cause above the engine's death, a plain error, a timed-out connect,
    # other dlib statuses, a variable, different or library index, cuDNN with a kernel fault.
    (
        "(EngineCore_0 pid=2) torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB. GPU 0 has a total capacity of 79.19 GiB\nvllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace (above) for the root cause.",
        "oom",
        "cuda-out-of-memory",
    ),
    (
        "(EngineCore_0 pid=2) RuntimeError: CUDA error: an illegal memory access was encountered\nvllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace (above) for the root cause.",
        "cuda_context_corrupted",
        "cuda-illegal-memory-access",
    ),
    (
        "ValueError: The decoder prompt (length 9000) is longer than the maximum model length of 8192.\nvllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace (above) for the root cause.",
        "user_error",
        None,
    ),
    (
        "ValueError: world_size must be set\nRuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:799] connect [10.0.0.2]:35000: Connection refused",
        "user_error",
        None,
    ),
    (
        "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:799] connect [10.0.0.2]:35000: Connection timed out",
        "timeout",
        "gloo-connect-timeout",
    ),
    (
        "Error while calling cudaGetDevice(&dev) in file /dlib/cuda/cuda_utils.h:178. code: 35, reason: CUDA driver version is insufficient for CUDA runtime version",
        "device_unavailable",
        "cuda-driver-mismatch",
    ),
    (
        "MemoryError: out of memory. code: 2, reason: out of memory",
        "host_oom",
        "host-allocator-failed",
    ),
    (
        '  File "train.py", line 168, in trainer_synapse\n    image = image_batch[i, 0:1, :, :]\nIndexError: index 1 is out of bounds for dimension 0 with size 1',
        "data_error",
        "data-index-out-of-range",
    ),
    (
        '  File "train.py", line 168, in trainer_synapse\n    image = image_batch[2, 0:1, :, :]\nIndexError: index 5 is out of bounds for dimension 0 with size 2',
        "data_error",
        "data-index-out-of-range",
    ),
    (
        '  File "/usr/lib/python3/site-packages/lib/ops.py", line 9, in f\n    y = x[1, :]\nIndexError: index 1 is out of bounds for dimension 0 with size 1',
        "data_error",
        "data-index-out-of-range",
    ),
    (
        "RuntimeError: CuDNN error: CUDNN_STATUS_EXECUTION_FAILED\nTHCudaCheck FAIL file=/pytorch/torch/lib/THD/base/data_channels/DataChannelNccl.cpp line=195 error=77 : an illegal memory access was encountered",
        "cuda_context_corrupted",
        "cuda-illegal-memory-access",
    ),
    ("RuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED", "cudnn", "cudnn-execution-failed"),
    (
        "torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. The server socket has failed to bind to [::]:29500 (errno: 98 - Address already in use).",
        "user_error",
        "user-address-in-use",
    ),
]


V31: list[Case] = [
    # Paddle's GPU kernel allocating; OpenCV's host and CUDA allocators; scatter's index dtype;
    # init_process_group's peers; HCCL's port.
    (
        "2   void phi::ScaleKernel<float, phi::GPUContext>(phi::GPUContext const&, phi::DenseTensor const&, float, bool, phi::DenseTensor*)\n3   float* phi::DeviceContext::Alloc<float>(phi::TensorBase*, unsigned long, bool) const",
        "oom",
        "cuda-out-of-memory",
    ),
    (
        "terminate called after throwing an instance of 'paddle::memory::allocation::BadAlloc'\n  what():\n\n--------------------------------------\nC++ Traceback (most recent call last):\n--------------------------------------\n0   phi::MatmulKernel<float, phi::GPUContext>(phi::GPUContext const&, phi::DenseTensor const&)\n1   phi::DeviceContext::Alloc(phi::TensorBase*, phi::Place const&)",
        "oom",
        "cuda-out-of-memory",
    ),
    (
        "cv2.error: OpenCV(4.6.0) /io/opencv/modules/core/src/alloc.cpp:73: error: (-4:Insufficient memory) Failed to allocate 4672512 bytes in function 'OutOfMemoryError'",
        "host_oom",
        "host-allocator-failed",
    ),
    (
        "RuntimeError: Expected object of scalar type Long but got scalar type Float for argument #3 'index'",
        "data_error",
        "data-label-format",
    ),
    (
        "    default_pg._set_sequence_number_for_group()\nRuntimeError: Connection reset by peer",
        "nccl",
        "nccl-error",
    ),
    (
        "    default_pg._set_sequence_number_for_group()\nRuntimeError: Connection refused",
        "nccl",
        "nccl-error",
    ),
    (
        "[ERROR] HCCL(1,python3):2025-07-23-03:47:57.070.463 [hccl_socket.cc:100] [1][HcclSocket][Listen] socket type[1], listen on ip[10.0.0.1] and specific port[16666] fail. Please check the port status and whether the port is been using by other process.\n[ERROR] HCCL(1,python3):2025-07-23-03:49:57.177.194 [hccl_socket_manager.cc:778] [2][Wait][LinkEstablish]wait socket establish timeout, role[1] rank[12] timeout[120]",
        "user_error",
        "hccl-listen-port-in-use",
    ),
    (
        "cv2.error: OpenCV(4.5.1) /opencv/modules/core/src/cuda/gpu_mat.cu:116: error: (-217:Gpu API call) out of memory in function 'allocate'",
        "oom",
        "cuda-out-of-memory",
    ),
    # Look-alikes: a CPU kernel's allocation, other arguments, a plain connection error, the
    # link timeout alone.
    (
        "2   void phi::ScaleKernel<float, phi::CPUContext>(phi::CPUContext const&, phi::DenseTensor const&, float, bool, phi::DenseTensor*)\n3   float* phi::DeviceContext::Alloc<float>(phi::TensorBase*, unsigned long, bool) const",
        "user_error",
        None,
    ),
    (
        "RuntimeError: Expected object of scalar type Float but got scalar type Double for argument #2 'mat2'",
        "user_error",
        None,
    ),
    ("ConnectionResetError: [Errno 104] Connection reset by peer", "user_error", None),
    (
        "[ERROR] HCCL(1,python3):2025-07-23-03:49:57.177.194 [hccl_socket_manager.cc:778] [2][Wait][LinkEstablish]wait socket establish timeout, role[1] rank[12] timeout[120]",
        "timeout",
        "distributed-store-timeout",
    ),
]


REVIEW_V31: list[Case] = [
    # Slurm's accounting is a summary written after the job: what the job printed decides.
    (
        "slurmstepd: error: *** JOB 1234567 ON n1 CANCELLED AT 2024-01-01T10:00:00 DUE TO TIME LIMIT ***\n1234567   train  gpu  acct  4  TIMEOUT  0:0\n1234567.batch  batch   acct  4  OUT_OF_ME+  0:125",
        "timeout",
        "distributed-time-limit",
    ),
    (
        "IndexError: Target 12 is out of bounds.\nJob ID: 1234567\nState: OUT_OF_MEMORY (exit code 1)",
        "data_error",
        "data-target-out-of-bounds",
    ),
    (
        "ValueError: learning rate must be positive\nsrun: error: n1: task 0: Exited with exit code 1\nState: CANCELLED (exit code 0)",
        "user_error",
        None,
    ),
    ("ValueError: bad\nState: NODE_FAIL (exit code 0)", "user_error", None),
    # States are Slurm's upper case.
    ("State: Timeout waiting for peers", "user_error", None),
    ("state: out_of_memory", "user_error", None),
    ("state: cancelled by user", "user_error", None),
    ("12000 00:01:23 eval cancelled", "user_error", None),
    # A C++ argument error in a pool's worker: the worker's death.
    (
        "terminate called after throwing an instance of 'std::out_of_range'\n  what():  vector::_M_range_check\njoblib.externals.loky.process_executor.TerminatedWorkerError: A worker process managed by the executor was unexpectedly terminated.\nThe exit codes of the workers are {SIGABRT(-6)}",
        "worker_lost",
        "pool-worker-lost",
    ),
    # Gloo's timed-out connect yields to a plain error, as its refused form does.
    (
        "ValueError: bad lr\nRuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:799] connect [10.0.0.2]:35000: Connection timed out",
        "user_error",
        None,
    ),
    # dlib's pinned host buffer is host memory.
    (
        "Error while calling cudaMallocHost(&data, new_size*sizeof(float)) in file /dlib/cuda/gpu_data.cpp:211. code: 2, reason: out of memory",
        "host_oom",
        "host-allocator-failed",
    ),
    # A literal index with old torch's wording; vLLM V0's engine loop.
    (
        '  File "t.py", line 3, in f\n    y = x[2]\nIndexError: index 2 is out of bounds for dim with size 2',
        "user_error",
        "user-dim-argument",
    ),
    (
        "vllm.engine.async_llm_engine.AsyncEngineDeadError: Background loop has errored already.",
        "worker_lost",
        "vllm-engine-dead",
    ),
]


TABLES: dict[str, list[Case]] = {
    "oom": OOM,
    "nan": NAN,
    "cuda-gdb": CUDA_GDB,
    "no-runtime": NO_RUNTIME,
    "store": STORE,
    "pool": POOL,
    "v6": V6,
    "v7": V7,
    "v8": V8,
    "v9": V9,
    "v10": V10,
    "v11": V11,
    "v12": V12,
    "v12b": V12B,
    "v14": V14,
    "v15": V15,
    "v16": V16,
    "v17": V17,
    "review-v15-v17": REVIEW,
    "v18": V18,
    "v19": V19,
    "v20": V20,
    "v21": V21,
    "review-v19-v21": REVIEW_V21,
    "v22": V22,
    "v23": V23,
    "v24": V24,
    "v25": V25,
    "review-v23-v25": REVIEW_V25,
    "v26": V26,
    "v27": V27,
    "v28": V28,
    "review-v26-v28": REVIEW_V28,
    "v29": V29,
    "v30": V30,
    "v31": V31,
    "review-v29-v31": REVIEW_V31,
}


@pytest.mark.parametrize(
    ("text", "expected_class", "expected_rule"),
    [
        pytest.param(*case, id=f"{name}-{index}")
        for name, cases in TABLES.items()
        for index, case in enumerate(cases)
    ],
)
def test_cue(text: str, expected_class: str, expected_rule: str | None) -> None:
    d = classify(None, text)
    assert (d.failure_class.value, d.rule) == (expected_class, expected_rule), text
    if expected_class == "cuda_context_corrupted":
        assert d.sticky, text


def test_a_dask_memory_warning_gets_advice_on_memory_not_the_pool_hint() -> None:
    """host_oom is pruned: the pool hint ("the trial is retried") would be wrong advice."""
    d = classify(
        None, "distributed.nanny - WARNING - Worker exceeded 95% memory budget. Restarting"
    )
    assert (d.failure_class.value, d.rule) == ("host_oom", "dask-nanny-memory")
    assert d.hint is not None and "memory_limit" in d.hint and "retried" not in d.hint


def test_a_pool_death_the_objective_caught_does_not_hide_its_own_later_failure() -> None:
    """The real call path passes the chain: the trial's own OOM after a loky worker's death it
    caught (a serial fallback) is the trial's, not the pool's."""
    msg = "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB"
    pool = (
        "joblib.externals.loky.process_executor.TerminatedWorkerError: A worker process managed "
        "by the executor was unexpectedly terminated. The exit codes of the workers are "
        "{SIGKILL(-9)}"
    )
    tb = (
        'Traceback (most recent call last):\n  File "obj.py", line 10, in objective\n    feats = '
        "Parallel(n_jobs=4)(jobs)\n" + pool + "\n\nDuring handling of the above exception, "
        'another exception occurred:\n\nTraceback (most recent call last):\n  File "obj.py", '
        "line 13, in objective\n    feats = [f(x) for x in data]\ntorch.OutOfMemoryError: " + msg
    )
    chain = [
        ("torch.OutOfMemoryError", msg),
        ("joblib.externals.loky.process_executor.TerminatedWorkerError", pool.split(": ", 1)[1]),
    ]
    d = classify("torch.OutOfMemoryError", msg, tb, chain=chain)
    assert (d.failure_class.value, d.rule) == ("oom", "cuda-out-of-memory")
    # The pool's death reported as the trial's own exception is the pool's.
    d = classify(
        "joblib.externals.loky.process_executor.TerminatedWorkerError",
        pool.split(": ", 1)[1],
        "RuntimeError: CUDA error: unspecified launch failure\n" + pool,
    )
    assert (d.failure_class.value, d.rule) == ("worker_lost", "pool-worker-lost")
