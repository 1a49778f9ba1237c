#!/usr/bin/env python3
"""Writes programs.json (kept so the manifest is easy to extend; edit and rerun)."""
import json, os

NV = "nvcc $NVFLAGS"   # $NVFLAGS: -O3 -lineinfo -arch=sm_90 -include $TOOLS/compat.h (measure_all.py sets it)
repos = {
    "sgrauerg/polybenchGpu": dict(root="polybenchGpu", commit="5584aaa7d0be810ff5eb0b61c49fb64ecc81ba4c", common=["common"]),
    "yuhc/gpu-rodinia": dict(root="gpu-rodinia", commit="9c10d3ea16ddba2ba057cc3951a9efc4c2cc18a4", common=["common", "cuda/util"]),
    "karpathy/llm.c": dict(root="llm.c", commit="f1e2ace651495b74ae22d45d1723443fd00ecd3a"),
    "NVIDIA/cuda-samples": dict(root="cuda-samples", commit="c94ff366aed18c797b8a85dfaac7817b0228b420",
                                common=["Common/" + h for h in ["exception.h", "helper_cuda.h", "helper_functions.h", "helper_image.h", "helper_math.h",
                                        "helper_string.h", "helper_timer.h", "multithreading.cpp", "multithreading.h"]]),
}
progs = []
def add(name, repo, d, build, run, analyse=None, prep=None, args=(), paths=None, note=None):
    p = dict(name=name, repo=repo, dir=d, paths=paths or [d], analyse=analyse or [d], args=list(args), build=build, run=run)
    if prep: p["prep"] = prep
    if note: p["note"] = note
    progs.append(p)

# PolyBench/GPU: each program is one .cu that includes ../../common/polybench.c; default (STANDARD) sizes.
for d, f in [("2DCONV", "2DConvolution"), ("2MM", "2mm"), ("3DCONV", "3DConvolution"), ("3MM", "3mm"), ("ADI", "adi"),
             ("ATAX", "atax"), ("BICG", "bicg"), ("CORR", "correlation"), ("COVAR", "covariance"), ("DOITGEN", "doitgen"),
             ("FDTD-2D", "fdtd2d"), ("GEMM", "gemm"), ("GEMVER", "gemver"), ("GESUMMV", "gesummv"), ("GRAMSCHM", "gramschmidt"),
             ("JACOBI1D", "jacobi1D"), ("JACOBI2D", "jacobi2D"), ("LU", "lu"), ("MVT", "mvt"), ("SYR2K", "syr2k"), ("SYRK", "syrk")]:
    extra = " -include $TOOLS/rtclock.h" if f == "doitgen" else ""   # doitgen.cu calls rtclock() and includes no definition
    add(f, "sgrauerg/polybenchGpu", "CUDA/" + d, f"{NV}{extra} {f}.cu -o prog", "./prog")

R = "yuhc/gpu-rodinia"
add("backprop", R, "cuda/backprop", f"gcc -O2 -c backprop.c facetrain.c imagenet.c && {NV} -c backprop_cuda.cu && {NV} backprop.o facetrain.o imagenet.o backprop_cuda.o -o prog -lm",
    "./prog 65536")
add("bfs", R, "cuda/bfs", f"{NV} bfs.cu -o prog -I../util -DTIMING", "./prog graph64k.txt", prep="python3 $TOOLS/gen_inputs.py bfs graph64k.txt 65536",
    args=["-I", "cuda/util", "-D", "TIMING"])
add("gaussian", R, "cuda/gaussian", f"{NV} -DclockRate=multiProcessorCount -DdeviceOverlap=asyncEngineCount gaussian.cu -o prog", "./prog -s 512 -q",
    note="CUDA 13 dropped cudaDeviceProp::clockRate/deviceOverlap, which it only prints")
add("hotspot", R, "cuda/hotspot", f"{NV} hotspot.cu -o prog", "./prog 512 2 2 temp_512 power_512 output.out",
    prep="python3 $TOOLS/gen_inputs.py grid temp_512 512 512 1 300 && python3 $TOOLS/gen_inputs.py grid power_512 512 512 1 0.001")
add("hotspot3D", R, "cuda/hotspot3D", f"{NV} 3D.cu -o prog", "./prog 512 8 100 power_512x8 temp_512x8 output.out",
    prep="python3 $TOOLS/gen_inputs.py grid temp_512x8 512 512 8 300 && python3 $TOOLS/gen_inputs.py grid power_512x8 512 512 8 0.001",
    paths=["cuda/hotspot3D/3D.cu", "cuda/hotspot3D/opt1.cu"])
add("lud", R, "cuda/lud/cuda", f"{NV} -I../common -I../../util -use_fast_math -DGPU_TIMER lud.cu lud_kernel.cu ../common/common.c -o prog",
    "./prog -s 1024", paths=["cuda/lud/cuda", "cuda/lud/common"], args=["-I", "cuda/lud/common", "-I", "cuda/util", "-D", "GPU_TIMER"])
add("nw", R, "cuda/nw", f"{NV} needle.cu -o prog", "./prog 2048 10")
add("pathfinder", R, "cuda/pathfinder", f"{NV} pathfinder.cu -o prog", "./prog 100000 100 20")
add("srad_v1", R, "cuda/srad/srad_v1", f"{NV} main.cu -o prog -lm", "./prog 10 0.5 502 458",
    prep="mkdir -p ../../../data/srad && python3 $TOOLS/gen_inputs.py pgm ../../../data/srad/image.pgm 502 458")
add("srad_v2", R, "cuda/srad/srad_v2", f"{NV} srad.cu -o prog", "./prog 2048 2048 0 127 0 127 0.5 2",
    note="not measured: srad_cuda_1 reads J_cuda[tx - cols] in block row 0 (out of bounds) and faults under ncu (LaunchFailed)")
add("streamcluster", R, "cuda/streamcluster", f"{NV} streamcluster_cuda_cpu.cpp streamcluster_cuda.cu streamcluster_header.cu -o prog",
    "./prog 10 20 256 16384 16384 1000 none output.txt 1")
add("lavaMD", R, "cuda/lavaMD",
    f"{NV} -c kernel/kernel_gpu_cuda_wrapper.cu -o kw.o && {NV} -c util/device/device.cu -o dev.o && gcc -O3 -fopenmp -c main.c util/num/num.c util/timer/timer.c && {NV} main.o num.o timer.o kw.o dev.o -o prog -lm -lgomp",
    "./prog -boxes1d 10")
add("particlefilter_naive", R, "cuda/particlefilter", f"{NV} -use_fast_math ex_particle_CUDA_naive_seq.cu -o prog_naive -lm",
    "./prog_naive -x 128 -y 128 -z 10 -np 1000", paths=["cuda/particlefilter/ex_particle_CUDA_naive_seq.cu"])
add("particlefilter_float", R, "cuda/particlefilter", f"{NV} -use_fast_math ex_particle_CUDA_float_seq.cu -o prog_float -lm",
    "./prog_float -x 128 -y 128 -z 10 -np 1000", paths=["cuda/particlefilter/ex_particle_CUDA_float_seq.cu"])
add("nn", R, "cuda/nn", f"{NV} nn_cuda.cu -o prog && gcc -O3 hurricane_gen.c -o hurricane_gen -lm",
    "./prog filelist_gen -r 5 -lat 30 -lng 90",
    prep="mkdir -p data && ./hurricane_gen 42760 4 && ls data/cane4_*.db > filelist_gen", note="prep runs after build (needs hurricane_gen)")
add("b+tree", R, "cuda/b+tree",
    f"{NV} -c kernel/kernel_gpu_cuda_wrapper.cu -o kw.o && {NV} -c kernel/kernel_gpu_cuda_wrapper_2.cu -o kw2.o && {NV} -c util/cuda/cuda.cu -o cu.o && gcc -O3 -c main.c util/timer/timer.c util/num/num.c && {NV} main.o timer.o num.o kw.o kw2.o cu.o -o prog -lm",
    "./prog file mil.txt command cmd.txt", prep="python3 $TOOLS/gen_inputs.py btree mil.txt cmd.txt 1000000")
add("dwt2d", R, "cuda/dwt2d", f"{NV} -Xcompiler -U_FORTIFY_SOURCE -I. main.cu dwt.cu components.cu dwt_cuda/fdwt53.cu dwt_cuda/fdwt97.cu dwt_cuda/common.cu dwt_cuda/rdwt97.cu dwt_cuda/rdwt53.cu -o prog",
    "./prog rgb.bmp -d 1024x1024 -f -5 -l 3", prep="mkdir -p ../../data/dwt2d && head -c 3145828 /dev/urandom > ../../data/dwt2d/rgb.bmp",
    note="not measured yet: main.cu strcpy()s argv[0] into malloc(strlen(argv[0])) (built without _FORTIFY_SOURCE so glibc does not abort), and it reads its input from ../../data/dwt2d/ (prep fixed after the last device run, unverified)")

S = "NVIDIA/cuda-samples"
def sample(name, d, files, run="./prog", extra="", args=()):
    add(name, S, "Samples/" + d, f"{NV} -I../../../Common {extra} {files} -o prog", run, args=["-I", "Common"] + list(args))
sample("matrixMul", "0_Introduction/matrixMul", "matrixMul.cu")
sample("vectorAdd", "0_Introduction/vectorAdd", "vectorAdd.cu")
sample("mergeSort", "0_Introduction/mergeSort", "bitonic.cu main.cpp mergeSort.cu mergeSort_host.cpp mergeSort_validate.cpp")
sample("simpleTemplates", "0_Introduction/simpleTemplates", "simpleTemplates.cu")
sample("reduction", "2_Concepts_and_Techniques/reduction", "reduction.cpp reduction_kernel.cu")
sample("scan", "2_Concepts_and_Techniques/scan", "main.cpp scan.cu scan_gold.cpp")
sample("histogram", "2_Concepts_and_Techniques/histogram", "histogram256.cu histogram64.cu histogram_gold.cpp main.cpp")
sample("convolutionSeparable", "2_Concepts_and_Techniques/convolutionSeparable", "convolutionSeparable.cu convolutionSeparable_gold.cpp main.cpp")
sample("scalarProd", "2_Concepts_and_Techniques/scalarProd", "scalarProd.cu scalarProd_cpu.cpp")
sample("sortingNetworks", "2_Concepts_and_Techniques/sortingNetworks", "bitonicSort.cu main.cpp oddEvenMergeSort.cu sortingNetworks_validate.cpp")
sample("shfl_scan", "2_Concepts_and_Techniques/shfl_scan", "shfl_scan.cu")
sample("threadFenceReduction", "2_Concepts_and_Techniques/threadFenceReduction", "threadFenceReduction.cu")
sample("eigenvalues", "2_Concepts_and_Techniques/eigenvalues", "bisect_large.cu bisect_small.cu bisect_util.cu gerschgorin.cpp main.cu matlab.cpp")
sample("dct8x8", "2_Concepts_and_Techniques/dct8x8", "BmpUtil.cpp DCT8x8_Gold.cpp dct8x8.cu")
sample("BlackScholes", "5_Domain_Specific/BlackScholes", "BlackScholes.cu BlackScholes_gold.cpp")
sample("binomialOptions", "5_Domain_Specific/binomialOptions", "binomialOptions.cpp binomialOptions_gold.cpp binomialOptions_kernel.cu")
sample("quasirandomGenerator", "5_Domain_Specific/quasirandomGenerator", "quasirandomGenerator.cpp quasirandomGenerator_gold.cpp quasirandomGenerator_kernel.cu")
sample("SobolQRNG", "5_Domain_Specific/SobolQRNG", "sobol.cpp sobol_gold.cpp sobol_gpu.cu sobol_primitives.cpp")
sample("dwtHaar1D", "5_Domain_Specific/dwtHaar1D", "dwtHaar1D.cu")
sample("fastWalshTransform", "5_Domain_Specific/fastWalshTransform", "fastWalshTransform.cu fastWalshTransform_gold.cpp")
sample("FDTD3d", "5_Domain_Specific/FDTD3d", "src/FDTD3d.cpp src/FDTD3dGPU.cu src/FDTD3dReference.cpp", extra="-Iinc",
       run="./prog --dimx=128 --dimy=128 --dimz=128 --radius=4 --timesteps=5", args=["-I", "Samples/5_Domain_Specific/FDTD3d/inc"])
sample("transpose", "6_Performance/transpose", "transpose.cu")
sample("alignedTypes", "6_Performance/alignedTypes", "alignedTypes.cu")
sample("globalToShmemAsyncCopy", "3_CUDA_Features/globalToShmemAsyncCopy", "globalToShmemAsyncCopy.cu")
sample("MonteCarloMultiGPU", "5_Domain_Specific/MonteCarloMultiGPU", "MonteCarloMultiGPU.cpp MonteCarlo_gold.cpp MonteCarlo_kernel.cu multithreading.cpp", extra="-lcurand")
sample("warpAggregatedAtomicsCG", "3_CUDA_Features/warpAggregatedAtomicsCG", "warpAggregatedAtomicsCG.cu")
sample("reductionMultiBlockCG", "2_Concepts_and_Techniques/reductionMultiBlockCG", "reductionMultiBlockCG.cu")
sample("cudaTensorCoreGemm", "3_CUDA_Features/cudaTensorCoreGemm", "cudaTensorCoreGemm.cu")
sample("tf32TensorCoreGemm", "3_CUDA_Features/tf32TensorCoreGemm", "tf32TensorCoreGemm.cu")
sample("bf16TensorCoreGemm", "3_CUDA_Features/bf16TensorCoreGemm", "bf16TensorCoreGemm.cu")
sample("dmmaTensorCoreGemm", "3_CUDA_Features/dmmaTensorCoreGemm", "dmmaTensorCoreGemm.cu")
sample("immaTensorCoreGemm", "3_CUDA_Features/immaTensorCoreGemm", "immaTensorCoreGemm.cu")
sample("simpleAtomicIntrinsics", "0_Introduction/simpleAtomicIntrinsics", "simpleAtomicIntrinsics.cu simpleAtomicIntrinsics_cpu.cpp")
progs[-1]["note"] = "measured: no plain shared/global load or store (atomics only), so no truth file"
sample("simpleVoteIntrinsics", "0_Introduction/simpleVoteIntrinsics", "simpleVoteIntrinsics.cu")
sample("template", "0_Introduction/template", "template.cu template_cpu.cpp")
sample("clock", "0_Introduction/clock", "clock.cu")
sample("asyncAPI", "0_Introduction/asyncAPI", "asyncAPI.cu")
sample("binaryPartitionCG", "3_CUDA_Features/binaryPartitionCG", "binaryPartitionCG.cu")
sample("simpleCooperativeGroups", "0_Introduction/simpleCooperativeGroups", "simpleCooperativeGroups.cu")
sample("MC_EstimatePiP", "2_Concepts_and_Techniques/MC_EstimatePiP", "src/main.cpp src/piestimator.cu src/test.cpp", extra="-Iinc -lcurand",
       args=["-I", "Samples/2_Concepts_and_Techniques/MC_EstimatePiP/inc"])
sample("convolutionFFT2D", "5_Domain_Specific/convolutionFFT2D", "convolutionFFT2D.cu convolutionFFT2D_gold.cpp main.cpp", extra="-lcufft")
sample("interval", "2_Concepts_and_Techniques/interval", "interval.cu")

# karpathy/llm.c dev/cuda: one program per file, each runs one of its kernel versions (the argument); all versions are run
L = "karpathy/llm.c"
# The others (attention_forward, classifier_fused, crossentropy_forward, encoder_*, gelu_*, layernorm_*, matmul_backward_bias,
# residual_forward, softmax_forward, ...) time every kernel version over each block size hundreds of times, with an L2 flush
# between runs: under ncu each of those launches costs ~100 ms, so one run outlasts the device's 10-minute command limit.
for f, ks in [("adamw", "1 2"), ("crossentropy_softmax_backward", "1")]:
    add(f, L, "dev/cuda", f"{NV} --use_fast_math -std=c++17 {f}.cu -o {f} -lcublas -lcublasLt",
        f"bash -c 'for k in {ks}; do ./{f} $k; done'" if ks else f"./{f}",
        paths=[f"dev/cuda/{f}.cu", "dev/cuda/common.h"], analyse=[f"dev/cuda/{f}.cu"])

json.dump(dict(repositories=repos, programs=progs), open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "programs.json"), "w"), indent=1)
print(len(progs), "programs")
