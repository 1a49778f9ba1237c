//! Launches as the IR and the whole-project index hold them: a kernel's
//! launch configurations, launch sites as plain data other files read,
//! and the host facts (calls of launching functions, `extern` constants)
//! that give a launch argument the values its host function's callers
//! pass.

use super::{BinOp, Span};

/// A launch configuration for a kernel.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Launch {
    pub grid: Option<[u64; 3]>,
    /// Decided by the front end's one launch resolver
    /// (`frontend/tu/launch_sites.rs`); `origin` says why.
    pub block: [u64; 3],
    /// Values of scalar parameters known at the launch site.
    pub params: Vec<Option<i64>>,
    /// Per parameter: the launch passes a pointer moved off its allocation
    /// (`buf + padding`, `&buf[k]`, or a variable the host function sets
    /// to one), so that pointer's alignment is not known.
    pub offset_args: Vec<bool>,
    pub span: Option<Span>,
    /// Why the block is what it is.
    pub origin: LaunchOrigin,
    /// The launch site is in another file of the project (`span` is then
    /// `None`): where.
    pub elsewhere: Option<SiteAt>,
    /// Per parameter: the values the launching host function's callers
    /// pass for it, where the launch passes one of that function's
    /// parameters and they are all known ([`HostArgs::values`]; empty:
    /// none).
    pub param_sets: Vec<Vec<i64>>,
    /// Per parameter: [`HostArgs::sampled`] (0: `param_sets` holds every
    /// value).
    pub param_sampled: Vec<u32>,
}

impl LaunchOrigin {
    /// The stable machine-readable name (`report` JSON's `launch.origin`).
    pub fn kind(self) -> &'static str {
        match self {
            LaunchOrigin::LaunchSite => "launch-site",
            LaunchOrigin::Config => "config",
            LaunchOrigin::LaunchBounds => "launch-bounds",
            LaunchOrigin::Default => "default",
        }
    }
}

/// A place in another file of the project.
#[derive(
    Clone,
    Debug,
    Default,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    serde::Serialize,
    serde::Deserialize,
)]
pub struct SiteAt {
    pub path: String,
    pub line: u32,
}

/// A template argument as another file reads it: a value, or a type by
/// its spelling, resolved again in the file that defines the kernel.
#[derive(
    Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum TemplateArg {
    Value(i64),
    Type(String),
    /// Not known where the launch is (its text).
    Unknown(String),
}

/// A `<<<…>>>` launch site as the whole project sees it: plain data that
/// the analysis of another file (the one defining the kernel) can use.
#[derive(
    Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct SiteRecord {
    /// The kernel's name, unqualified.
    pub kernel: String,
    pub targs: Vec<TemplateArg>,
    pub grid: Option<[u64; 3]>,
    pub block: Option<[u64; 3]>,
    /// Values of the scalar arguments, where known.
    pub args: Vec<Option<i64>>,
    /// [`Launch::offset_args`].
    pub offset_args: Vec<bool>,
    /// Where the site is, in the numbering of the file analysed
    /// ([`Span::file`]).
    pub span: Span,
    /// Which file of that translation unit defines the kernel launched
    /// (same numbering); `None` when the unit only declares it (or does
    /// not see it), so that any definition of that name may be the one.
    pub kernel_file: Option<u32>,
    /// The host function the launch is in, where some of its arguments
    /// are that function's parameters (`k<<<…>>>(n)` in `void run(int
    /// n)`): their values come from the function's callers.
    #[serde(default)]
    pub host: Option<HostArgs>,
}

/// The launch arguments that are parameters of the host function the
/// launch is in, and the values that function's callers pass for them.
#[derive(
    Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct HostArgs {
    /// The host function, unqualified.
    pub function: String,
    /// Per launch argument: what it is over the host function's
    /// parameters (`n`, `C / NH`), if it is that.
    pub params: Vec<Option<HostExpr>>,
    /// Per launch argument: the values the callers pass for it, ascending
    /// (empty: not known, as when one caller passes a value the analysis
    /// cannot know).
    pub values: Vec<Vec<i64>>,
    /// What the conditions the launch is under say of the host function's
    /// parameters (`if (arrayLength <= 1024) k<<<…>>>(arrayLength)`): a
    /// value the callers pass outside them never reaches the launch.
    #[serde(default)]
    pub bounds: Vec<HostBound>,
    /// Per launch argument: how many values the callers pass when more
    /// than `budget::MAX_HOST_VALUES` do (`values` then holds evenly
    /// spaced ones among them); 0 otherwise.
    #[serde(default)]
    pub sampled: Vec<u32>,
}

/// `found` (ascending) as the values a launch argument is analysed over:
/// all of them, or past `budget::MAX_HOST_VALUES` evenly spaced ones (the
/// first and the last among them), with how many there were (0: all).
pub fn sampled(found: Vec<i64>) -> (Vec<i64>, u32) {
    let k = crate::budget::MAX_HOST_VALUES;
    let n = found.len();
    if n <= k || k < 2 {
        return (found, 0);
    }
    let picked = (0..k).map(|i| found[i * (n - 1) / (k - 1)]).collect();
    (picked, n as u32)
}

/// A launch runs only when host parameter `param` lies in `lo..=hi`.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct HostBound {
    pub param: u32,
    pub lo: i64,
    pub hi: i64,
}

impl HostArgs {
    /// Sets the values launch argument `i` is analysed over to `found`
    /// (ascending), or evenly spaced ones among them past
    /// `budget::MAX_HOST_VALUES` ([`sampled`]).
    pub fn set_values(&mut self, i: usize, found: Vec<i64>) {
        let n = self.params.len().max(i + 1);
        self.values.resize(n, Vec::new());
        self.sampled.resize(n, 0);
        let (values, of) = sampled(found);
        self.values[i] = values;
        self.sampled[i] = of;
    }

    /// `values` (those callers pass for parameter `param`) less those the
    /// launch's conditions rule out.
    pub fn admitted(&self, param: u32, values: &[i64]) -> Vec<i64> {
        values
            .iter()
            .copied()
            .filter(|v| {
                self.bounds
                    .iter()
                    .all(|b| b.param != param || (b.lo..=b.hi).contains(v))
            })
            .collect()
    }
}

/// A launch argument as an expression over the launching host function's
/// parameters (by position), as another file reads it.
#[derive(
    Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum HostExpr {
    Param(u32),
    Const(i64),
    /// An integer operation (not a comparison or a logical one).
    Bin(BinOp, Box<HostExpr>, Box<HostExpr>),
}

impl HostExpr {
    /// Its values when each parameter it reads takes the values `sets`
    /// gives it; `None` when one is missing, or when two parameters each
    /// take several values (which go together is not known). A value
    /// whose arithmetic is undefined is left out.
    pub fn over(&self, sets: &[(u32, Vec<i64>)]) -> Option<Vec<i64>> {
        let params = self.params();
        if params
            .iter()
            .any(|p| !sets.iter().any(|(q, v)| q == p && !v.is_empty()))
        {
            return None;
        }
        let many: Vec<&(u32, Vec<i64>)> = sets
            .iter()
            .filter(|(p, v)| params.contains(p) && v.len() > 1)
            .collect();
        if many.len() > 1 {
            return None;
        }
        let runs = many.first().map_or(1, |(_, v)| v.len());
        let mut out: Vec<i64> = (0..runs)
            .filter_map(|r| {
                let at = |p: u32| {
                    let (_, v) = sets.iter().find(|(q, _)| *q == p)?;
                    v.get(if v.len() > 1 { r } else { 0 }).copied()
                };
                self.eval(&at)
            })
            .collect();
        out.sort_unstable();
        out.dedup();
        Some(out)
    }

    /// The parameters it reads, ascending.
    pub fn params(&self) -> Vec<u32> {
        let mut out = Vec::new();
        let mut todo = vec![self];
        while let Some(e) = todo.pop() {
            match e {
                HostExpr::Param(p) => out.push(*p),
                HostExpr::Const(_) => {}
                HostExpr::Bin(_, a, b) => todo.extend([&**a, &**b]),
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Its value with each parameter's from `at`; `None` where one is not
    /// given or the arithmetic is undefined (a division by zero).
    pub fn eval(&self, at: &dyn Fn(u32) -> Option<i64>) -> Option<i64> {
        match self {
            HostExpr::Param(p) => at(*p),
            HostExpr::Const(c) => Some(*c),
            HostExpr::Bin(op, a, b) => super::eval_bin(*op, a.eval(at)?, b.eval(at)?),
        }
    }
}

/// A call of a host function from another host function
/// (`scanExclusiveShort(d_out, d_in, N / len, len)` in `main`), with what
/// each argument is: the values a launch in the callee passes on come from
/// such calls.
#[derive(
    Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct HostCall {
    /// The function called, unqualified.
    pub callee: String,
    /// The function the call is in, unqualified.
    pub caller: String,
    pub args: Vec<HostArg>,
}

/// What a host call passes for one argument.
#[derive(
    Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum HostArg {
    /// One of these values (a constant, or the values an enclosing loop
    /// with constant bounds gives its variable), ascending.
    Values(Vec<i64>),
    /// The caller's own parameter (by position): its callers say.
    Param(u32),
    /// Anything else: not known.
    Unknown,
}

/// What a unit gives the whole-project index besides its launch sites:
/// its calls of the host functions asked about, and its integer constants
/// with external linkage (`extern "C" const uint MAX = 1024;`), which
/// another file sees only declared.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct HostFacts {
    pub sites: Vec<SiteRecord>,
    pub calls: Vec<HostCall>,
    pub extern_consts: Vec<(String, i64)>,
}

/// A launch site of another file of the project, given to the analysis
/// of the file that defines its kernel.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ProjectLaunch {
    pub site: SiteRecord,
    /// The file the site is in (`site.span`'s line is in it).
    pub at: SiteAt,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LaunchOrigin {
    /// A `<<<…>>>` launch site: in the same translation unit, or in
    /// another file of the project ([`Launch::elsewhere`]).
    LaunchSite,
    /// A per-kernel override in the configuration.
    Config,
    /// `__launch_bounds__(N)`.
    LaunchBounds,
    /// Nothing said (no launch, or a launch whose block is not known):
    /// the configured default for the kernel's dimensions
    /// (`FrontendOptions::block_defaults`).
    #[default]
    Default,
}
