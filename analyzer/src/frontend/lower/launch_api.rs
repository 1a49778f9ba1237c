//! Launches that reach their kernel through a value, in host walks: a
//! variable holding a kernel (`auto kernel = k<T, 128>;` then
//! `kernel<<<g, b>>>(…)`), and the runtime API's
//! `cudaLaunchKernel(func, grid, block, args, smem, stream)` and
//! `cudaLaunchCooperativeKernel` (the same arguments), whose `func` is a
//! kernel or such a variable behind casts (`(void *)kernel`,
//! `reinterpret_cast<const void *>(&k<64>)`), and
//! `cudaLaunchKernelEx(&config, func, args…)` with the grid and block the
//! walk saw assigned to `config.gridDim`/`config.blockDim`. The kernel's
//! arguments are not read (they go through a `void *` array, or are taken
//! by reference).

use tree_sitter::Node;

use super::{Lowerer, Src, Val};
use crate::frontend::fields::Fields;
use crate::frontend::tu::TArg;

/// The runtime API calls that launch a kernel given as their first
/// argument, grid and block as the next two.
const LAUNCH_API: [&str; 2] = ["cudaLaunchKernel", "cudaLaunchCooperativeKernel"];

/// The call that takes a launch configuration (`cudaLaunchConfig_t`, its
/// `gridDim` and `blockDim` assigned field by field) and then the kernel.
const LAUNCH_EX: &str = "cudaLaunchKernelEx";

/// The C++ casts, read as their operand.
const CASTS: [&str; 4] = [
    "reinterpret_cast",
    "static_cast",
    "const_cast",
    "dynamic_cast",
];

impl Lowerer<'_, '_> {
    /// `e` without parentheses, casts and `&`.
    fn through_casts<'n>(&self, e: Node<'n>, src: &Src) -> Node<'n> {
        let mut e = e;
        // Each step goes down the tree, so the walk ends.
        loop {
            let inner = match e.node_kind() {
                "parenthesized_expression" => e.named(0),
                "cast_expression" => e.field("value"),
                "pointer_expression" if src.text(e).trim_start().starts_with('&') => {
                    e.field("argument")
                }
                "call_expression" => {
                    let cast = e
                        .field("function")
                        .filter(|f| f.node_kind() == "template_function")
                        .and_then(|f| f.field("name"))
                        .is_some_and(|name| CASTS.contains(&src.text(name).as_str()));
                    match cast {
                        true => e.field("arguments").and_then(|a| a.named(0)),
                        false => None,
                    }
                }
                _ => None,
            };
            match inner {
                Some(i) => e = i,
                None => return e,
            }
        }
    }

    /// The kernel (name, template arguments) that `e` names: a kernel this
    /// unit defines, an instance of one, or a variable holding one.
    pub(super) fn kernel_ref(&mut self, e: Node, src: &Src) -> Option<(String, Vec<TArg>)> {
        let e = self.through_casts(e, src);
        if let Some(k) = self.kernel_var(e, src) {
            return Some(k);
        }
        let (name, targs) = match e.node_kind() {
            "identifier" | "qualified_identifier" => (src.text(e), Vec::new()),
            "template_function" => {
                let name = src.text(e.field("name")?);
                let targs = e
                    .field("arguments")
                    .map(|a| self.template_args(a, src))
                    .unwrap_or_default();
                (name, targs)
            }
            _ => return None,
        };
        let short = name.rsplit("::").next().unwrap_or(&name).to_string();
        let is_kernel = self
            .tu
            .kernels
            .iter()
            .any(|d| d.is_kernel && d.name == short);
        is_kernel.then_some((short, targs))
    }

    /// The kernel a variable (`f`, an identifier) holds, if a host walk
    /// saw it initialised or assigned with one.
    pub(super) fn kernel_var(&self, f: Node, src: &Src) -> Option<(String, Vec<TArg>)> {
        if f.node_kind() != "identifier" {
            return None;
        }
        self.kernel_vars.get(&src.text(f)).cloned()
    }

    /// In a host walk, remembers that `name` holds the kernel `init` names
    /// (or forgets it, when `init` names none).
    pub(super) fn note_kernel_var(&mut self, name: &str, init: Node, src: &Src) {
        if self.launches.is_none() {
            return;
        }
        match self.kernel_ref(init, src) {
            Some(k) => {
                self.kernel_vars.insert(name.to_string(), k);
            }
            None => {
                self.kernel_vars.remove(name);
            }
        }
    }

    /// `cudaLaunchKernel(func, grid, block, …)` and the like in a host
    /// walk: a launch site of the kernel `func` names.
    pub(super) fn api_launch(&mut self, n: Node, f: Node, args: &[Node], src: &Src) -> Option<Val> {
        // Host walks only.
        self.launches.as_ref()?;
        let callee = src.text(f);
        let short = callee.rsplit("::").next().unwrap_or(&callee);
        if short == LAUNCH_EX && args.len() >= 2 {
            return self.api_launch_ex(n, args, src);
        }
        if !LAUNCH_API.contains(&short) || args.len() < 3 {
            return None;
        }
        let kernel = self.kernel_ref(args[0], src)?;
        let config = self.launch_config(n, Some(args[1]), Some(args[2]), src);
        for a in &args[3..] {
            self.rv(*a, src);
        }
        self.push_site(n, kernel, config, Vec::new(), Vec::new(), src);
        Some(Val::Void)
    }

    /// `cudaLaunchKernelEx(&config, func, args…)`: a launch site of the
    /// kernel `func` names, with the grid and block assigned to `config`
    /// in this walk (each unknown where none was).
    fn api_launch_ex(&mut self, n: Node, args: &[Node], src: &Src) -> Option<Val> {
        let kernel = self.kernel_ref(args[1], src)?;
        let cfg = self.through_casts(args[0], src);
        let (grid, block) = match cfg.node_kind() {
            "identifier" => self.launch_cfgs.get(&src.text(cfg)).cloned(),
            _ => None,
        }
        .unwrap_or((None, None));
        let config = self.launch_config_of(n, grid, block, src);
        let vals = self.launch_args(&args[2..], src);
        self.push_site(n, kernel, config, vals, Vec::new(), src);
        Some(Val::Void)
    }

    /// In a host walk, `config.gridDim = g` or `config.blockDim = b` (or
    /// through `->`): remembered for a later `cudaLaunchKernelEx`, and the
    /// value assigned returned; `None` for any other assignment.
    pub(super) fn launch_cfg_field(
        &mut self,
        target: Node,
        op: Option<crate::ir::BinOp>,
        rhs: Option<&Val>,
        src: &Src,
    ) -> Option<Val> {
        self.launches.as_ref()?;
        if target.node_kind() != "field_expression" || op.is_some() {
            return None;
        }
        let field = src.text(target.field("field")?);
        let base = target.field("argument")?;
        if base.node_kind() != "identifier" || !matches!(field.as_str(), "gridDim" | "blockDim") {
            return None;
        }
        let v = rhs?.clone();
        let slot = self
            .launch_cfgs
            .entry(src.text(base))
            .or_insert((None, None));
        if field == "gridDim" {
            slot.0 = Some(v.clone());
        } else {
            slot.1 = Some(v.clone());
        }
        Some(v)
    }
}
