//! `--nvcc` and `--sass`: the instructions nvcc really emits, for the
//! analyzer to check its model against (`warplint_analyzer::nvcc::sass`).
//!
//! With `--nvcc PATH` (or `auto`: `nvcc` on `PATH`, else under
//! `$CUDA_HOME`, `$CUDA_PATH` or `/usr/local/cuda`), each file is compiled
//! (`nvcc -cubin -O3 -lineinfo -arch=sm_XX`, with the file's `-I` and
//! `-D`) into a temporary folder and disassembled with the toolkit's
//! `nvdisasm -gi`. With `--sass FILE`, a listing made that way is read
//! instead (how the tests run without a toolkit). A file nvcc cannot
//! compile is analysed by the model alone, with a warning.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use warplint_analyzer::nvcc::sass::{parse, Listing, Sass};

/// Where the instructions come from.
#[derive(Clone, Debug)]
pub enum SassSource {
    Toolkit(Toolkit),
    /// A listing given (`--sass`), already parsed, and its path.
    Listing(Arc<Listing>, PathBuf),
}

/// A CUDA toolkit that can compile and disassemble.
#[derive(Clone, Debug)]
pub struct Toolkit {
    pub nvcc: PathBuf,
    pub nvdisasm: PathBuf,
    /// `nvcc 13.0`, from `nvcc --version`.
    pub version: String,
}

impl SassSource {
    /// `--nvcc` and `--sass` as given (at most one).
    pub fn resolve(nvcc: Option<&str>, sass: Option<&Path>) -> Result<Option<SassSource>, String> {
        match (nvcc, sass) {
            (Some(_), Some(_)) => Err("--nvcc and --sass cannot be used together".into()),
            (Some(n), None) => Toolkit::find(n).map(|t| Some(SassSource::Toolkit(t))),
            (None, Some(p)) => {
                let text = std::fs::read_to_string(p)
                    .map_err(|e| format!("--sass {}: {e}", p.display()))?;
                let listing = parse(&text);
                if listing.functions.is_empty() {
                    return Err(format!(
                        "--sass {}: no function in it (give the output of `nvdisasm -gi` of a \
                         cubin built with -lineinfo)",
                        p.display()
                    ));
                }
                Ok(Some(SassSource::Listing(
                    Arc::new(listing),
                    p.to_path_buf(),
                )))
            }
            (None, None) => Ok(None),
        }
    }

    /// How the settings name it.
    pub fn describe(&self) -> String {
        match self {
            SassSource::Toolkit(t) => format!("{} ({})", t.version, t.nvcc.display()),
            SassSource::Listing(_, p) => format!("the listing {}", p.display()),
        }
    }

    /// The SASS of one file (`path`, its text `bytes`, its headers'
    /// canonical paths by file id - 1), or why there is none.
    pub fn for_unit(
        &self,
        path: &Path,
        bytes: &[u8],
        headers: &[PathBuf],
        arch: warplint_analyzer::Arch,
        options: &warplint_analyzer::Options,
        include_dirs: &[PathBuf],
    ) -> Result<Arc<Sass>, String> {
        let (listing, compiler) = match self {
            SassSource::Listing(l, _) => ((**l).clone(), None),
            SassSource::Toolkit(t) => (
                t.compile(path, bytes, arch, options, include_dirs)?,
                Some(t.version.clone()),
            ),
        };
        let file_ids = file_ids(&listing.files, path, headers);
        Ok(Arc::new(Sass {
            listing,
            file_ids,
            compiler,
        }))
    }
}

impl Toolkit {
    /// The toolkit `nvcc` names: a path to nvcc, or `auto`.
    fn find(spec: &str) -> Result<Toolkit, String> {
        let nvcc = if spec == "auto" {
            auto_nvcc().ok_or_else(|| {
                "--nvcc auto: no nvcc on PATH, in $CUDA_HOME/bin, $CUDA_PATH/bin or \
                 /usr/local/cuda/bin"
                    .to_string()
            })?
        } else {
            PathBuf::from(spec)
        };
        let out = Command::new(&nvcc)
            .arg("--version")
            .output()
            .map_err(|e| format!("--nvcc {}: {e}", nvcc.display()))?;
        let text = String::from_utf8_lossy(&out.stdout);
        let version = text
            .split("release ")
            .nth(1)
            .and_then(|r| r.split(',').next())
            .map(|v| format!("nvcc {}", v.trim()))
            .ok_or_else(|| format!("--nvcc {}: `--version` names no release", nvcc.display()))?;
        let beside = nvcc.with_file_name(exe("nvdisasm"));
        let nvdisasm = if beside.is_file() {
            beside
        } else {
            on_path("nvdisasm").ok_or_else(|| {
                format!(
                    "--nvcc {}: no nvdisasm beside it or on PATH",
                    nvcc.display()
                )
            })?
        };
        Ok(Toolkit {
            nvcc,
            nvdisasm,
            version,
        })
    }

    /// Compiles `path` to a cubin in a temporary folder and reads its
    /// SASS. Source read from stdin is written there first.
    fn compile(
        &self,
        path: &Path,
        bytes: &[u8],
        arch: warplint_analyzer::Arch,
        options: &warplint_analyzer::Options,
        include_dirs: &[PathBuf],
    ) -> Result<Listing, String> {
        let dir = TempDir::new()?;
        let cubin = dir.0.join("unit.cubin");
        let source = if path.is_file() {
            path.to_path_buf()
        } else {
            let s = dir.0.join("stdin.cu");
            std::fs::write(&s, bytes).map_err(|e| format!("nvcc: {e}"))?;
            s
        };
        let mut cmd = Command::new(&self.nvcc);
        cmd.args(["-cubin", "-O3", "-lineinfo", "-x", "cu"])
            .arg(format!("-arch={arch}"))
            .arg("-o")
            .arg(&cubin);
        if let Some(folder) = source.parent() {
            cmd.arg("-I").arg(folder);
        }
        for d in include_dirs {
            cmd.arg("-I").arg(d);
        }
        for (k, v) in &options.frontend.defines {
            cmd.arg(format!("-D{k}={v}"));
        }
        cmd.arg(&source);
        let out = cmd.output().map_err(|e| format!("nvcc: {e}"))?;
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            let first = err
                .lines()
                .find(|l| l.contains("error"))
                .or_else(|| err.lines().next())
                .unwrap_or("")
                .trim()
                .to_string();
            return Err(format!("nvcc could not compile it ({first})"));
        }
        let dis = Command::new(&self.nvdisasm)
            .args(["-gi", "-c"])
            .arg(&cubin)
            .output()
            .map_err(|e| format!("nvdisasm: {e}"))?;
        if !dis.status.success() {
            return Err(format!(
                "nvdisasm could not read the cubin ({})",
                String::from_utf8_lossy(&dis.stderr).trim()
            ));
        }
        Ok(parse(&String::from_utf8_lossy(&dis.stdout)))
    }
}

/// Sets `options.sass` for the unit `path` (text `bytes`, its headers'
/// canonical paths) where the run asks for SASS; what stopped it, as a
/// warning for the file.
pub fn attach(
    settings: &crate::settings::Settings,
    options: &mut warplint_analyzer::Options,
    path: &Path,
    bytes: &[u8],
    headers: &[PathBuf],
) -> Option<String> {
    let source = settings.sass.as_ref()?;
    match source.for_unit(
        path,
        bytes,
        headers,
        settings.arch,
        options,
        &settings.include_dirs,
    ) {
        Ok(s) => {
            options.sass = Some(s);
            None
        }
        Err(e) => Some(format!(
            "{}: {e}; analysed by the model alone",
            path.display()
        )),
    }
}

/// Which file of the unit each listing file is: by canonical path, else
/// (a listing made elsewhere) by its name where one file of the unit alone
/// has it.
fn file_ids(files: &[String], path: &Path, headers: &[PathBuf]) -> Vec<Option<u32>> {
    let unit: Vec<PathBuf> = std::iter::once(crate::includes::canonical(path))
        .chain(headers.iter().cloned())
        .collect();
    files
        .iter()
        .map(|f| {
            let c = crate::includes::canonical(Path::new(f));
            if let Some(i) = unit.iter().position(|u| *u == c) {
                return Some(i as u32);
            }
            let name = Path::new(f).file_name()?;
            let mut same = unit
                .iter()
                .enumerate()
                .filter(|(_, u)| u.file_name() == Some(name));
            match (same.next(), same.next()) {
                (Some((i, _)), None) => Some(i as u32),
                _ => None,
            }
        })
        .collect()
}

fn exe(name: &str) -> String {
    format!("{name}{}", std::env::consts::EXE_SUFFIX)
}

fn on_path(name: &str) -> Option<PathBuf> {
    let paths = std::env::var_os("PATH")?;
    std::env::split_paths(&paths)
        .map(|d| d.join(exe(name)))
        .find(|p| p.is_file())
}

/// `nvcc` on `PATH`, else in the toolkit's usual homes.
fn auto_nvcc() -> Option<PathBuf> {
    on_path("nvcc").or_else(|| {
        ["CUDA_HOME", "CUDA_PATH"]
            .iter()
            .filter_map(|v| std::env::var_os(v).map(PathBuf::from))
            .chain([PathBuf::from("/usr/local/cuda")])
            .map(|h| h.join("bin").join(exe("nvcc")))
            .find(|p| p.is_file())
    })
}

/// A folder of the system's temporary folder, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Result<TempDir, String> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("warplint-sass-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| format!("nvcc: {}: {e}", dir.display()))?;
        Ok(TempDir(dir))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
