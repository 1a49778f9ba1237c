//! The file's part in the whole-project index: its launch sites written as
//! plain data another file can read ([`SiteRecord`]), and the launch sites
//! of other files read back here for the kernels this file defines but
//! does not launch ([`Options::project_launches`]). Template arguments
//! travel by spelling (`float`, `128`, `Pair*`) and are resolved again in
//! this file, so a type means what this file's declarations make it.

use super::super::lower::{function_params, Lowerer};
use super::super::types::{self, StructDef, Ty};
use super::super::Options;
use super::{FuncDef, LaunchSite, TArg, Tu};
use crate::ir::{ProjectLaunch, SiteRecord, TemplateArg};

/// `a` as another file reads it.
pub(super) fn portable(a: &TArg, structs: &[StructDef]) -> TemplateArg {
    match a {
        TArg::Value(v) => TemplateArg::Value(*v),
        TArg::Type(Ty::Unknown(s)) => TemplateArg::Unknown(s.clone()),
        TArg::Type(t) => TemplateArg::Type(types::spell(t, structs)),
        // A struct template's instance carries its arguments for static
        // members, which a spelling does not: not carried over.
        TArg::Instance(t, ..) => TemplateArg::Unknown(types::spell(t, structs)),
        TArg::Unknown(s) => TemplateArg::Unknown(s.clone()),
    }
}

/// Every argument of `args` as another file reads it.
fn portable_all(args: &[TArg], structs: &[StructDef]) -> Vec<TemplateArg> {
    args.iter().map(|a| portable(a, structs)).collect()
}

/// The file's launch sites as plain data; `kernels` are the kernels the
/// unit defines.
pub(super) fn records(
    sites: &[LaunchSite],
    structs: &[StructDef],
    kernels: &[FuncDef],
) -> Vec<SiteRecord> {
    let mut out: Vec<SiteRecord> = sites
        .iter()
        .map(|s| SiteRecord {
            kernel_file: kernels
                .iter()
                .find(|d| d.name == s.kernel)
                .map(|d| d.src.file),
            kernel: s.kernel.clone(),
            targs: portable_all(&s.targs, structs),
            grid: s.grid,
            block: s.block,
            args: s.args.clone(),
            offset_args: s.offset_args.clone(),
            span: s.span,
            host: s.host.clone(),
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

impl Tu<'_> {
    /// The other files' launch sites of kernel `def`, each with its
    /// template arguments read in this file, when this file has no site of
    /// it (a launch or an explicit instantiation): a kernel launched here
    /// is analysed with this file's launches only, as the compiler sees
    /// this translation unit. (Taking the other files' sites too where a
    /// site here has no known block was tried: every file including a
    /// header of template kernels then analysed every instantiation of
    /// the project, ggml's mmq.cuh in each of its dozens of includers.)
    pub(super) fn project_sites_of<'o>(
        &mut self,
        def: &FuncDef,
        local: &[LaunchSite],
        options: &'o Options,
    ) -> Vec<(&'o ProjectLaunch, Vec<TArg>)> {
        if local.iter().any(|l| l.kernel == def.name) {
            return Vec::new();
        }
        let arity = function_params(def.node).len();
        options
            .project_launches
            .iter()
            // A site whose unit saw no definition of the kernel names it
            // only: it is taken when it passes as many arguments as this
            // definition has parameters.
            .filter(|p| {
                p.site.kernel == def.name
                    && (p.site.kernel_file.is_some() || p.site.args.len() == arity)
            })
            .map(|p| {
                let targs = if def.tparams.is_empty() {
                    Vec::new()
                } else {
                    self.local_targs(&p.site.targs)
                };
                (p, targs)
            })
            .collect()
    }

    /// A type argument's spelling read in this file: a built-in, typedef,
    /// struct or macro name, with trailing `*`s for pointers.
    fn type_named(&mut self, spelled: &str) -> Ty {
        let s = spelled.trim();
        if let Some(inner) = s.strip_suffix('*') {
            return Ty::Ptr(Box::new(self.type_named(inner)));
        }
        let mut lw = Lowerer::new(self);
        lw.named_type(s)
    }

    /// `args` (another file's template arguments) as this file's.
    fn local_targs(&mut self, args: &[TemplateArg]) -> Vec<TArg> {
        args.iter()
            .map(|a| match a {
                TemplateArg::Value(v) => TArg::Value(*v),
                // A type this file does not know stays a type (its size
                // is what is unknown, and the reason says so).
                TemplateArg::Type(s) => TArg::Type(self.type_named(s)),
                TemplateArg::Unknown(s) => TArg::Unknown(s.clone()),
            })
            .collect()
    }
}
