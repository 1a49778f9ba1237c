//! The macros every CUDA translation unit sees from nvcc, for one
//! architecture's device pass. The front end defines them before the
//! file's first line when [`crate::FrontendOptions::arch`] names the
//! architecture; the caller's own defines come after and may redefine
//! them.

use crate::hardware::Arch;

/// The CUDA release whose nvcc warplint stands in for (its version macros).
pub const CUDA_VERSION: (u32, u32) = (13, 0);

/// Macros every CUDA translation unit sees from nvcc, for `arch`'s device
/// pass: nvcc's own and `CUDART_VERSION` from the `cuda_runtime.h` it
/// includes implicitly.
pub fn predefined_macros(arch: Arch) -> Vec<(String, String)> {
    let (major, minor) = CUDA_VERSION;
    vec![
        ("__CUDACC__".into(), "1".into()),
        ("__NVCC__".into(), "1".into()),
        ("__CUDACC_VER_MAJOR__".into(), major.to_string()),
        ("__CUDACC_VER_MINOR__".into(), minor.to_string()),
        ("__CUDACC_VER_BUILD__".into(), "0".into()),
        (
            "CUDART_VERSION".into(),
            (major * 1000 + minor * 10).to_string(),
        ),
        (
            "CUDA_VERSION".into(),
            (major * 1000 + minor * 10).to_string(),
        ),
        (
            "__CUDA_ARCH__".into(),
            format!("{}", arch.major * 100 + arch.minor * 10),
        ),
    ]
}
