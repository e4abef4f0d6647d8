//! A loaded program: its files (the main one and what it includes), its
//! classes, and how a class sees its members through `extends`.

use crate::ast::{Class, MemberKind};
use crate::error::{LangError, Undefined};
use crate::isa::Isa;
use crate::parser::parse;
use crate::source::{Diag, Errors, Sources, Span};
use crate::stdlib::{self, StdClass};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone)]
pub struct Program {
    pub sources: Sources,
    pub classes: Vec<Class>,
    index: HashMap<String, usize>,
}

/// Where a member a class sees is declared: (class index, member index).
pub type MemberRef = (usize, usize);

impl Program {
    /// Reads, parses and checks `paths` (and what they include). Errors
    /// and warnings are all collected; any error fails the load.
    pub fn load(paths: &[PathBuf]) -> Result<(Program, Vec<Diag>), Errors> {
        let mut sources = Sources::new();
        let mut diags = Vec::new();
        let mut files = Vec::new();
        let mut queue: Vec<(PathBuf, Option<Span>)> =
            paths.iter().map(|p| (p.clone(), None)).collect();
        let mut read_errors = Vec::new();
        // The program's folders: those of the files named. An include
        // must stay inside them (after every symbolic link), or it is not
        // read at all — so that no message can show a line of a file
        // elsewhere (`include "/etc/shadow"`).
        let folders: Vec<PathBuf> = paths
            .iter()
            .filter_map(|p| {
                let dir = p.parent().filter(|d| !d.as_os_str().is_empty());
                std::fs::canonicalize(dir.unwrap_or(Path::new("."))).ok()
            })
            .collect();
        while let Some((path, from)) = queue.pop() {
            let key = std::fs::canonicalize(&path).unwrap_or(path.clone());
            if sources.find(&key).is_some() || sources.find(&path).is_some() {
                continue;
            }
            if let Some(span) = from {
                let why = match std::fs::canonicalize(&path) {
                    Ok(real) if folders.iter().any(|f| real.starts_with(f)) => None,
                    Ok(_) => Some(format!(
                        "cannot include {}: it is outside the program's folder (included files must lie in the folder of the files named)",
                        path.display()
                    )),
                    Err(e) => Some(format!("cannot read included file {}: {e}", path.display())),
                };
                if let Some(why) = why {
                    diags.push(Diag::error(span, why));
                    continue;
                }
            }
            let text = match std::fs::read_to_string(&path) {
                Ok(t) => t,
                Err(e) => {
                    match from {
                        Some(span) => diags.push(Diag::error(
                            span,
                            format!("cannot read included file {}: {e}", path.display()),
                        )),
                        None => read_errors.push(format!("cannot read {}: {e}", path.display())),
                    }
                    continue;
                }
            };
            let id = sources.add(path.clone(), text);
            let f = parse(id, sources.text(id), &mut diags);
            let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
            for (inc, span) in &f.includes {
                queue.push((dir.join(inc), Some(*span)));
            }
            files.push(f);
        }
        if !read_errors.is_empty() {
            return Err(Errors {
                diags: Vec::new(),
                rendered: read_errors.join("\n"),
            });
        }
        Program::finish(sources, files, diags)
    }

    /// A program from text (one file, no includes resolved from disk).
    pub fn from_text(name: &str, text: &str) -> Result<(Program, Vec<Diag>), Errors> {
        let mut sources = Sources::new();
        let mut diags = Vec::new();
        let id = sources.add(name, text);
        let f = parse(id, sources.text(id), &mut diags);
        for (inc, span) in &f.includes {
            diags.push(Diag::error(
                *span,
                format!("include \"{inc}\" is only possible in a file on disk"),
            ));
        }
        Program::finish(sources, vec![f], diags)
    }

    fn finish(
        sources: Sources,
        files: Vec<crate::ast::File>,
        mut diags: Vec<Diag>,
    ) -> Result<(Program, Vec<Diag>), Errors> {
        let mut classes = Vec::new();
        let mut index = HashMap::new();
        for c in files.into_iter().flat_map(|f| f.classes) {
            if let Some(&prev) = index.get(&c.name.name) {
                let p: &Class = &classes[prev];
                diags.push(
                    Diag::error(
                        c.name.span,
                        format!("class {} is defined twice", c.name.name),
                    )
                    .note(format!(
                        "first defined at {}",
                        sources.location(p.name.span)
                    )),
                );
                continue;
            }
            if stdlib::class(&c.name.name).is_some() {
                diags.push(Diag::error(
                    c.name.span,
                    format!("{} is the name of a standard class", c.name.name),
                ));
                continue;
            }
            index.insert(c.name.name.clone(), classes.len());
            classes.push(c);
        }
        let prog = Program {
            sources,
            classes,
            index,
        };
        diags.extend(crate::check::check(&prog));
        if diags.iter().any(|d| !d.warning) {
            let rendered = prog.sources.render_all(&diags);
            return Err(Errors { diags, rendered });
        }
        Ok((prog, diags))
    }

    /// Index of a class by name.
    pub fn class(&self, name: &str) -> Option<usize> {
        self.index.get(name).copied()
    }

    pub fn class_names(&self) -> Vec<&str> {
        self.classes.iter().map(|c| c.name.name.as_str()).collect()
    }

    /// The class and its bases, base first. Stops at an unknown base or a cycle.
    pub fn chain(&self, ci: usize) -> Vec<usize> {
        let mut v = vec![ci];
        let mut cur = ci;
        while let Some(b) = self.classes[cur]
            .extends
            .as_ref()
            .and_then(|e| self.class(&e.name))
        {
            if v.contains(&b) {
                break;
            }
            v.push(b);
            cur = b;
        }
        v.reverse();
        v
    }

    /// Every member the class sees, by name: a derived class's definition
    /// replaces its base's.
    pub fn members(&self, ci: usize) -> HashMap<String, MemberRef> {
        let mut out = HashMap::new();
        for c in self.chain(ci) {
            for (mi, m) in self.classes[c].members.iter().enumerate() {
                if matches!(m.kind, MemberKind::Import) {
                    continue;
                }
                out.insert(m.name.name.clone(), (c, mi));
            }
        }
        out
    }

    /// Data members in declaration order, base first (initialisers run so).
    pub fn data_members(&self, ci: usize) -> Vec<MemberRef> {
        let view = self.members(ci);
        let mut out = Vec::new();
        for c in self.chain(ci) {
            for (mi, m) in self.classes[c].members.iter().enumerate() {
                if matches!(m.kind, MemberKind::Data { .. })
                    && view.get(&m.name.name) == Some(&(c, mi))
                {
                    out.push((c, mi));
                }
            }
        }
        out
    }

    /// Standard classes imported by the class or its bases.
    pub fn imports(&self, ci: usize) -> Vec<&'static StdClass> {
        let mut v: Vec<&'static StdClass> = Vec::new();
        for c in self.chain(ci) {
            for m in &self.classes[c].members {
                if let (MemberKind::Import, Some(s)) = (&m.kind, stdlib::class(&m.name.name)) {
                    if !v.iter().any(|x| x.name == s.name) {
                        v.push(s);
                    }
                }
            }
        }
        v
    }

    /// User classes (of this program) imported by the class or its bases,
    /// each once, in the order written, base first.
    pub fn user_imports(&self, ci: usize) -> Vec<usize> {
        let mut v = Vec::new();
        for c in self.chain(ci) {
            for m in &self.classes[c].members {
                if let (MemberKind::Import, Some(k)) = (&m.kind, self.class(&m.name.name)) {
                    if !v.contains(&k) {
                        v.push(k);
                    }
                }
            }
        }
        v
    }

    /// The instruction sets the class names: through its standard imports
    /// and, since an imported class's code is concatenated into its own,
    /// those its imported user classes name (transitively).
    pub fn named_isas(&self, ci: usize) -> Vec<Isa> {
        let mut isas = Vec::new();
        let mut seen = vec![ci];
        let mut todo = vec![ci];
        while let Some(c) = todo.pop() {
            isas.extend(self.imports(c).iter().filter_map(|s| s.isa));
            for k in self.user_imports(c) {
                if !seen.contains(&k) {
                    seen.push(k);
                    todo.push(k);
                }
            }
        }
        isas.sort_by_key(|i| i.name());
        isas.dedup();
        isas
    }

    /// The instruction set the class generates code for: the one its
    /// imports name, else the host's.
    pub fn isa(&self, ci: usize) -> Result<Isa, LangError> {
        match self.named_isas(ci).as_slice() {
            [] => Isa::host().ok_or(LangError::NoIsa),
            [one] => Ok(*one),
            _ => Err(LangError::MixedIsas(self.classes[ci].name.name.clone())),
        }
    }

    /// Members left undefined (bitstrings and C functions declared without
    /// a body), with the class that declared them.
    pub fn undefined(&self, ci: usize) -> Vec<(String, MemberRef)> {
        let mut v: Vec<(String, MemberRef)> = self
            .members(ci)
            .into_iter()
            .filter(|(_, (c, m))| {
                matches!(
                    &self.classes[*c].members[*m].kind,
                    MemberKind::Bitstring { body: None, .. }
                        | MemberKind::Function { body: None, .. }
                )
            })
            .map(|(n, (c, m))| (self.describe_member(c, m, &n), (c, m)))
            .collect();
        v.sort();
        v
    }

    fn describe_member(&self, c: usize, m: usize, name: &str) -> String {
        match &self.classes[c].members[m].kind {
            MemberKind::Bitstring {
                params: Some(p), ..
            } => format!(
                "bitstring {name}({})",
                p.iter()
                    .map(|p| format!("{} {}", p.ty.display(), p.name.name))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            MemberKind::Bitstring { .. } => format!("bitstring {name}"),
            MemberKind::Function { ret, .. } => format!("{} {name}()", ret.display()),
            _ => name.to_string(),
        }
    }

    /// Why the class cannot be built and run, naming every undefined member.
    pub fn concrete_or_why(&self, ci: usize) -> Result<(), LangError> {
        let c = &self.classes[ci];
        let undefined = self.undefined(ci);
        if undefined.is_empty() && !c.is_abstract {
            return Ok(());
        }
        let concrete = if undefined.is_empty() {
            Vec::new()
        } else {
            (0..self.classes.len())
                .filter(|&k| {
                    self.chain(k).contains(&ci)
                        && self.undefined(k).is_empty()
                        && !self.classes[k].is_abstract
                })
                .map(|k| self.classes[k].name.name.clone())
                .collect()
        };
        Err(LangError::Abstract {
            class: c.name.name.clone(),
            undefined: undefined
                .into_iter()
                .map(|(member, (dc, dm))| Undefined {
                    member,
                    declared_in: self.classes[dc].name.name.clone(),
                    at: self
                        .sources
                        .location(self.classes[dc].members[dm].name.span),
                })
                .collect(),
            concrete,
        })
    }
}
