//! From syntax trees to the lowered [`Policy`]: resolve names, check types,
//! expand functions. Every problem is a located [`PolicyDiagnostic`]; lowering
//! goes on past errors so that one mistake does not hide the next.

use std::collections::HashMap;
use std::sync::Arc;

use grail_lang::ast::{self, EnumOrder, Span};
use grail_lang::print;

use crate::diagnostic::PolicyDiagnostic;
use crate::hir::*;
use crate::suggest::did_you_mean;
use crate::value::{Origin, Val, ValKind};

/// The lowered policy and everything wrong with it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Lowered {
    pub policy: Policy,
    pub diagnostics: Vec<PolicyDiagnostic>,
}

/// Lowers the files of one policy; `files[i]` is file `i` of every [`Loc`].
pub fn lower(files: &[&ast::SourceFile]) -> Lowered {
    let mut lw = Lowerer::default();
    lw.declare(files);
    lw.lower_enums(files);
    lw.lower_matrices(files);
    lw.lower_schemas(files);
    lw.lower_layers(files);
    lw.lower_rules(files);
    Lowered { policy: lw.policy, diagnostics: lw.diagnostics }
}

/// A global name and what it denotes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Global {
    Enum(EnumId),
    Record(RecordId),
    /// A document kind, and the record of its top-level keys.
    Document(DocKindId, RecordId),
    Matrix(MatrixId),
    Fn(u32, usize),
}

#[derive(Default)]
struct Lowerer {
    policy: Policy,
    diagnostics: Vec<PolicyDiagnostic>,
    /// Type-level and value-level names: enums, records, documents, matrices, functions.
    globals: HashMap<String, (Global, Loc)>,
    /// Document binders (`binding`) to their kind.
    binders: HashMap<String, DocKindId>,
    /// Binders of every document of a kind (`bindings`).
    all_binders: HashMap<String, DocKindId>,
    /// Where each rule id is declared.
    rule_ids: HashMap<String, Loc>,
}

impl Lowerer {
    fn error(&mut self, code: &'static str, loc: Loc, message: impl Into<String>) -> &mut PolicyDiagnostic {
        self.diagnostics.push(PolicyDiagnostic::error(code, loc, message));
        self.diagnostics.last_mut().expect("just pushed")
    }

    // ------------------------------------------------------------ declarations

    fn declare(&mut self, files: &[&ast::SourceFile]) {
        let mut enums = 0;
        let mut records = 0;
        let mut documents = 0;
        let mut matrices = 0;
        for (f, file) in files.iter().enumerate() {
            for (i, item) in file.items.iter().enumerate() {
                let name = item.name();
                let loc = Loc { file: f as u32, span: name.span };
                let global = match item {
                    ast::Item::Enum(_) => {
                        enums += 1;
                        Global::Enum(enums - 1)
                    }
                    ast::Item::Record(_) => {
                        records += 1;
                        Global::Record(records - 1)
                    }
                    ast::Item::Document(d) => {
                        // A document's top-level keys are a record of its own.
                        records += 1;
                        documents += 1;
                        self.declare_binder(&d.binder, f as u32, documents - 1);
                        if let Some(all) = &d.all_binder {
                            let loc = Loc { file: f as u32, span: all.span };
                            if self.binders.contains_key(&all.text)
                                || self.all_binders.insert(all.text.clone(), documents - 1).is_some()
                            {
                                self.error(
                                    "duplicate-name",
                                    loc,
                                    format!("two document kinds are both named `{}` in rules", all.text),
                                );
                            }
                        }
                        Global::Document(documents - 1, records - 1)
                    }
                    ast::Item::Layers(_) => continue,
                    ast::Item::Question(q) => {
                        self.declare_rule_id(&q.id, f as u32);
                        continue;
                    }
                    ast::Item::Table(t) => {
                        self.declare_rule_id(&t.id, f as u32);
                        continue;
                    }
                    ast::Item::Matrix(_) => {
                        matrices += 1;
                        Global::Matrix(matrices - 1)
                    }
                    ast::Item::Fn(_) => Global::Fn(f as u32, i),
                    ast::Item::Rule(r) => {
                        self.declare_rule_id(&r.id, f as u32);
                        continue;
                    }
                };
                if let Some((_, first)) = self.globals.get(&name.text) {
                    let first = *first;
                    self.error("duplicate-name", loc, format!("`{}` is declared twice", name.text))
                        .labels
                        .push((first, "first declared here".into()));
                    continue;
                }
                self.globals.insert(name.text.clone(), (global, loc));
            }
        }
    }

    fn declare_binder(&mut self, binder: &ast::Name, file: u32, doc: DocKindId) {
        let loc = Loc { file, span: binder.span };
        if self.binders.insert(binder.text.clone(), doc).is_some() {
            self.error("duplicate-name", loc, format!("two document kinds are both named `{}` in rules", binder.text));
        }
    }

    fn declare_rule_id(&mut self, id: &ast::Name, file: u32) {
        let loc = Loc { file, span: id.span };
        if let Some(first) = self.rule_ids.get(&id.text).copied() {
            let d = self.error("duplicate-rule", loc, format!("rule `{}` is defined twice", id.text));
            d.labels.push((first, "first defined here".into()));
            d.help = Some("every rule identifier names exactly one rule".into());
        } else {
            self.rule_ids.insert(id.text.clone(), loc);
        }
    }

    /// Every name `lookup` could have meant, for suggestions.
    fn global_names(&self) -> Vec<&str> {
        self.globals.keys().chain(self.binders.keys()).chain(self.all_binders.keys()).map(String::as_str).collect()
    }

    fn unknown_name(&mut self, loc: Loc, what: &str, name: &str, candidates: &[&str]) {
        // `what` may name an owner after a colon: "field:Doc" reads "`Doc` has no field `x`".
        let message = match what.split_once(':') {
            Some((what, owner)) => format!("`{owner}` has no {what} `{name}`"),
            None => format!("unknown {what} `{name}`"),
        };
        let is_type = what == "type";
        let d = self.error("unknown-name", loc, message);
        if let Some(s) = did_you_mean(name, candidates.iter().copied()) {
            d.help = Some(format!("did you mean `{s}`?"));
        } else if is_type {
            d.help = Some(
                "a type is `bool`, `int`, `string`, `list T`, `map K -> V`, or a declared enumeration or record".into(),
            );
        }
    }

    // ------------------------------------------------------------ enumerations

    fn lower_enums(&mut self, files: &[&ast::SourceFile]) {
        for (f, file) in files.iter().enumerate() {
            for item in &file.items {
                let ast::Item::Enum(e) = item else { continue };
                let mut variants: Vec<String> = Vec::new();
                for v in &e.variants {
                    if variants.contains(&v.text) {
                        self.error(
                            "duplicate-name",
                            Loc { file: f as u32, span: v.span },
                            format!("enumeration `{}` lists `{}` twice", e.name.text, v.text),
                        );
                        continue;
                    }
                    variants.push(v.text.clone());
                }
                if variants.is_empty() {
                    self.error(
                        "empty-enum",
                        Loc { file: f as u32, span: e.name.span },
                        format!("enumeration `{}` has no variants", e.name.text),
                    )
                    .help = Some(format!("list its variants between the braces: `enum {} {{ a b }}`", e.name.text));
                }
                self.policy.enums.push(EnumDef {
                    name: e.name.text.clone(),
                    order: e.order,
                    variants,
                    docs: e.docs.clone(),
                    loc: Loc { file: f as u32, span: e.name.span },
                });
            }
        }
    }

    fn variant(&self, e: EnumId, text: &str) -> Option<u32> {
        self.policy.enums.get(e as usize)?.variants.iter().position(|v| v == text).map(|i| i as u32)
    }

    /// A string literal read as a variant of `e`, or a located error.
    fn variant_or_error(&mut self, e: EnumId, text: &str, loc: Loc) -> Option<u32> {
        if let Some(v) = self.variant(e, text) {
            return Some(v);
        }
        let def = &self.policy.enums[e as usize];
        let name = def.name.clone();
        let variants: Vec<String> = def.variants.clone();
        let listed = variants.iter().map(|v| format!("`{v}`")).collect::<Vec<_>>().join(", ");
        let d = self.error("unknown-variant", loc, format!("`{text}` is not a variant of `{name}`"));
        d.help = Some(match did_you_mean(text, variants.iter().map(String::as_str)) {
            Some(s) => format!("did you mean `{s}`? the variants are {listed}"),
            None => format!("the variants are {listed}"),
        });
        None
    }

    // ------------------------------------------------------------ types

    fn ty_name(&self, ty: &Ty) -> String {
        match ty {
            Ty::Bool => "bool".into(),
            Ty::Int => "int".into(),
            Ty::Str => "string".into(),
            Ty::Time => "time".into(),
            Ty::Duration => "duration".into(),
            Ty::Id => "id".into(),
            Ty::Enum(e) => self.policy.enums.get(*e as usize).map(|d| d.name.clone()).unwrap_or_default(),
            Ty::Record(r) => self.policy.records.get(*r as usize).map(|d| d.name.clone()).unwrap_or_default(),
            Ty::List(t) => format!("list {}", self.ty_name(t)),
            Ty::Map(k, v) => format!("map {} -> {}", self.ty_name(k), self.ty_name(v)),
            Ty::Matrix(m) => format!("matrix `{}`", self.matrix_name(*m)),
            Ty::Row(m) => format!("row of `{}`", self.matrix_name(*m)),
            Ty::Domain(e) => format!("enumeration `{}`", self.ty_name(&Ty::Enum(*e))),
            Ty::Pairs(t) => format!("pairs of {}", self.ty_name(t)),
            Ty::Net => "network".into(),
            Ty::Error => "?".into(),
        }
    }

    fn matrix_name(&self, m: MatrixId) -> String {
        self.policy.matrices.get(m as usize).map(|d| d.name.clone()).unwrap_or_default()
    }

    /// A scalar or enum type named in a schema or a matrix column.
    fn named_type(&mut self, name: &ast::Name, file: u32, allow_records: bool) -> Ty {
        match name.text.as_str() {
            "bool" => return Ty::Bool,
            "int" => return Ty::Int,
            // `text`: a string that is not empty (the field says so: `FieldDef::nonempty`).
            "string" | "text" => return Ty::Str,
            "id" => return Ty::Id,
            _ => {}
        }
        match self.globals.get(&name.text).map(|g| g.0) {
            Some(Global::Enum(e)) => Ty::Enum(e),
            Some(Global::Record(r)) if allow_records => Ty::Record(r),
            // A document kind's top-level keys are a record: a `ref` to a file of that kind reads it so.
            Some(Global::Document(_, r)) if allow_records => Ty::Record(r),
            Some(_) => {
                self.error(
                    "type-mismatch",
                    Loc { file, span: name.span },
                    format!("`{}` is not a type that can be used here", name.text),
                );
                Ty::Error
            }
            None => {
                let mut candidates: Vec<&str> = vec!["bool", "int", "string", "text", "id"];
                let globals: Vec<String> = self
                    .globals
                    .iter()
                    .filter(|(_, (g, _))| {
                        matches!(g, Global::Enum(_)) || (allow_records && matches!(g, Global::Record(_)))
                    })
                    .map(|(n, _)| n.clone())
                    .collect();
                candidates.extend(globals.iter().map(String::as_str));
                self.unknown_name(Loc { file, span: name.span }, "type", &name.text, &candidates);
                Ty::Error
            }
        }
    }

    /// A field type, and the least integer it admits (`int >= 1`).
    fn type_expr(&mut self, t: &ast::TypeExpr, file: u32) -> (Ty, Option<i64>) {
        match t {
            ast::TypeExpr::Named(n) => (self.named_type(n, file, true), None),
            ast::TypeExpr::Int { min, .. } => (Ty::Int, *min),
            // `ref string`: a file of any content, named by its path (see conform).
            ast::TypeExpr::Ref(name, _) => match self.named_type(name, file, true) {
                t @ (Ty::Record(_) | Ty::Str | Ty::Error) => (t, None),
                _ => {
                    self.error(
                        "type-mismatch",
                        Loc { file, span: name.span },
                        format!("`ref` needs a record or `string`, not `{}`", name.text),
                    );
                    (Ty::Error, None)
                }
            },
            ast::TypeExpr::List(elem, _) => {
                let (e, min) = self.type_expr(elem, file);
                (Ty::List(Box::new(e)), min)
            }
            ast::TypeExpr::Map(key, value, _) => {
                let k = self.named_type(key, file, false);
                if !matches!(k, Ty::Enum(_) | Ty::Str | Ty::Id | Ty::Error) {
                    self.error(
                        "type-mismatch",
                        Loc { file, span: key.span },
                        format!("a map is keyed by a string or an enumeration, not `{}`", key.text),
                    );
                }
                let (v, min) = self.type_expr(value, file);
                (Ty::Map(Box::new(k), Box::new(v)), min)
            }
        }
    }

    fn has_identity(&self, ty: &Ty) -> bool {
        match ty {
            Ty::Bool | Ty::Int | Ty::Str | Ty::Id | Ty::Enum(_) | Ty::Error => true,
            Ty::Record(r) => self.policy.records.get(*r as usize).is_some_and(|d| d.identity.is_some()),
            _ => false,
        }
    }

    // ------------------------------------------------------------ matrices

    fn lower_matrices(&mut self, files: &[&ast::SourceFile]) {
        for (f, file) in files.iter().enumerate() {
            let f = f as u32;
            for item in &file.items {
                let ast::Item::Matrix(m) = item else { continue };
                let loc = Loc { file: f, span: m.name.span };
                let key_enum = match self.named_type(&m.key_enum, f, false) {
                    Ty::Enum(e) => Some(e),
                    Ty::Error => None,
                    _ => {
                        self.error(
                            "type-mismatch",
                            Loc { file: f, span: m.key_enum.span },
                            "a matrix is indexed by an enumeration",
                        );
                        None
                    }
                };
                let columns: Vec<ColumnDef> = m
                    .columns
                    .iter()
                    .map(|c| ColumnDef { name: c.name.text.clone(), ty: self.named_type(&c.ty, f, false) })
                    .collect();
                let mut cells = Vec::new();
                if let Some(e) = key_enum {
                    let variants = self.policy.enums[e as usize].variants.clone();
                    let mut rows: Vec<Option<&ast::Row>> = vec![None; variants.len()];
                    for row in &m.rows {
                        let rloc = Loc { file: f, span: row.key.span };
                        let Some(v) = self.variant_or_error(e, &row.key.text, rloc) else { continue };
                        if rows[v as usize].is_some() {
                            self.error(
                                "duplicate-name",
                                rloc,
                                format!("matrix `{}` has two rows for `{}`", m.name.text, row.key.text),
                            );
                            continue;
                        }
                        rows[v as usize] = Some(row);
                    }
                    for (v, row) in rows.iter().enumerate() {
                        let Some(row) = row else {
                            self.error(
                                "missing-row",
                                loc,
                                format!("matrix `{}` has no row for `{}`", m.name.text, variants[v]),
                            )
                            .help = Some(format!(
                                "add a row `{}:` with one cell per column; every variant of `{}` needs one",
                                variants[v], m.key_enum.text
                            ));
                            cells.push(vec![Val::unknown(); columns.len()]);
                            continue;
                        };
                        if row.cells.len() != columns.len() {
                            self.error(
                                "type-mismatch",
                                Loc { file: f, span: row.span },
                                format!(
                                    "row `{}` has {}; matrix `{}` has {}",
                                    row.key.text,
                                    plural(row.cells.len(), "cell"),
                                    m.name.text,
                                    plural(columns.len(), "column"),
                                ),
                            );
                        }
                        let mut row_cells = Vec::new();
                        for (c, column) in columns.iter().enumerate() {
                            let val = match row.cells.get(c) {
                                Some(cell) => self.literal_value(cell, &column.ty, f),
                                None => Val::unknown(),
                            };
                            row_cells.push(val);
                        }
                        cells.push(row_cells);
                    }
                }
                self.policy.matrices.push(MatrixDef {
                    name: m.name.text.clone(),
                    key_enum: key_enum.unwrap_or(u32::MAX),
                    columns,
                    cells,
                    docs: m.docs.clone(),
                    loc,
                });
            }
        }
    }

    /// A literal of the policy (a matrix cell, a default) as a value of `ty`.
    fn literal_value(&mut self, lit: &ast::Literal, ty: &Ty, file: u32) -> Val {
        let loc = Loc { file, span: lit.span() };
        let origin = Origin::policy(loc);
        let kind = match (lit, ty) {
            (_, Ty::Error) => ValKind::Absent(crate::value::Absence::Unknown),
            (ast::Literal::Int(i, _), Ty::Int) => ValKind::Int(*i),
            (ast::Literal::Bool(b, _), Ty::Bool) => ValKind::Bool(*b),
            (ast::Literal::Str(s, _), Ty::Str) => ValKind::Str(s.as_str().into()),
            (ast::Literal::Str(s, _), Ty::Id) if is_identifier(s) => ValKind::Id(s.as_str().into()),
            (ast::Literal::Str(s, _), Ty::Enum(e)) => match self.variant_or_error(*e, s, loc) {
                Some(v) => ValKind::Enum(*e, v),
                None => ValKind::Absent(crate::value::Absence::Unknown),
            },
            (ast::Literal::Name(n), Ty::Enum(e)) => match self.variant_or_error(*e, &n.text, loc) {
                Some(v) => ValKind::Enum(*e, v),
                None => ValKind::Absent(crate::value::Absence::Unknown),
            },
            _ => {
                let want = self.ty_name(ty);
                self.error(
                    "type-mismatch",
                    loc,
                    format!("expected a value of type `{want}`, found `{}`", print::literal(lit)),
                );
                ValKind::Absent(crate::value::Absence::Unknown)
            }
        };
        Val::new(kind, origin)
    }

    fn column(&mut self, c: &ast::ColumnRef, file: u32) -> Option<(MatrixId, usize)> {
        let loc = Loc { file, span: c.matrix.span };
        let m = match self.globals.get(&c.matrix.text).map(|g| g.0) {
            Some(Global::Matrix(m)) => m,
            _ => {
                let names: Vec<String> = self
                    .globals
                    .iter()
                    .filter(|(_, (g, _))| matches!(g, Global::Matrix(_)))
                    .map(|(n, _)| n.clone())
                    .collect();
                let names: Vec<&str> = names.iter().map(String::as_str).collect();
                self.unknown_name(loc, "matrix", &c.matrix.text, &names);
                return None;
            }
        };
        let def = &self.policy.matrices[m as usize];
        match def.columns.iter().position(|col| col.name == c.column.text) {
            Some(i) => Some((m, i)),
            None => {
                let names: Vec<String> = def.columns.iter().map(|c| c.name.clone()).collect();
                let matrix = def.name.clone();
                let names: Vec<&str> = names.iter().map(String::as_str).collect();
                self.unknown_name(
                    Loc { file, span: c.column.span },
                    &format!("column:{matrix}"),
                    &c.column.text,
                    &names,
                );
                None
            }
        }
    }

    // ------------------------------------------------------------ schemas

    fn lower_schemas(&mut self, files: &[&ast::SourceFile]) {
        // Records first get their ids in declaration order (documents included),
        // so that field types can refer to records declared later.
        let mut decls = Vec::new();
        for (f, file) in files.iter().enumerate() {
            for item in &file.items {
                match item {
                    ast::Item::Record(r) => decls.push((f as u32, Some(r), None)),
                    ast::Item::Document(d) => decls.push((f as u32, None, Some(d))),
                    _ => {}
                }
            }
        }
        for (f, r, d) in &decls {
            let (name, docs, span) = match (r, d) {
                (Some(r), _) => (r.name.text.clone(), r.docs.clone(), r.name.span),
                (_, Some(d)) => (d.name.text.clone(), d.docs.clone(), d.name.span),
                _ => continue,
            };
            self.policy.records.push(RecordDef {
                name,
                identity: None,
                fields: Vec::new(),
                checks: Default::default(),
                open: false,
                docs,
                loc: Loc { file: *f, span },
            });
        }
        for (id, (f, r, d)) in decls.iter().enumerate() {
            let (fields, checks) = match (r, d) {
                (Some(r), _) => (&r.fields, &r.checks),
                (_, Some(d)) => (&d.fields, &d.checks),
                _ => continue,
            };
            let mut lowered = Vec::new();
            for field in fields {
                if let Some(first) = lowered.iter().find(|x: &&FieldDef| x.name == field.name.text) {
                    let first = first.loc;
                    self.error(
                        "duplicate-name",
                        Loc { file: *f, span: field.name.span },
                        format!("field `{}` is declared twice", field.name.text),
                    )
                    .labels
                    .push((first, "first declared here".into()));
                    continue;
                }
                lowered.push(self.field(field, *f));
            }
            let open = checks.iter().any(|c| c.allow);
            let checks = self.checks(checks, *f);
            let rec = &mut self.policy.records[id];
            rec.fields = lowered;
            rec.checks = checks;
            rec.open = open;
            if let Some(r) = r
                && let Some(ident) = &r.identity
            {
                match self.policy.records[id].field(&ident.text) {
                    Some(i)
                        if !matches!(
                            self.policy.records[id].fields[i].ty,
                            Ty::Record(_) | Ty::List(_) | Ty::Map(..)
                        ) =>
                    {
                        self.policy.records[id].identity = Some(i);
                    }
                    Some(_) => {
                        self.error(
                            "type-mismatch",
                            Loc { file: *f, span: ident.span },
                            format!("identity field `{}` must be a scalar", ident.text),
                        );
                    }
                    None => {
                        let names: Vec<String> =
                            self.policy.records[id].fields.iter().map(|x| x.name.clone()).collect();
                        let names: Vec<&str> = names.iter().map(String::as_str).collect();
                        let owner = format!("field:{}", self.policy.records[id].name);
                        self.unknown_name(Loc { file: *f, span: ident.span }, &owner, &ident.text, &names);
                    }
                }
            }
            if let Some(d) = d {
                self.document(d, *f, id as RecordId);
            }
        }
        // Defaults, bounds and `unique` need every record's identity.
        for (id, (f, r, d)) in decls.iter().enumerate() {
            let fields = match (r, d) {
                (Some(r), _) => &r.fields,
                (_, Some(d)) => &d.fields,
                _ => continue,
            };
            for field in fields {
                self.field_clauses(id as RecordId, field, *f);
            }
        }
        self.overlapping_kinds();
    }

    /// Two document kinds whose selectors one document can satisfy both:
    /// which it is would depend on the order of declaration, so it is an
    /// error, located at both selectors. Tests on one key exclude each other
    /// when one says `absent` and the other not, or both name different values.
    fn overlapping_kinds(&mut self) {
        let excludes = |a: &KeyCondDef, b: &KeyCondDef| match (a, b) {
            (KeyCondDef::Absent, KeyCondDef::Absent) => false,
            (KeyCondDef::Absent, _) | (_, KeyCondDef::Absent) => true,
            (KeyCondDef::Equals(x), KeyCondDef::Equals(y)) => x != y,
            _ => false,
        };
        let mut found = Vec::new();
        let mut given_twice = Vec::new();
        let docs = &self.policy.documents;
        for (j, b) in docs.iter().enumerate() {
            for a in &docs[..j] {
                if let (SelectorDef::Given { name: x }, SelectorDef::Given { name: y }) = (&a.selector, &b.selector)
                    && x == y
                {
                    given_twice.push((b.loc, a.loc, a.name.clone(), b.name.clone(), x.clone()));
                }
                let (SelectorDef::Keys(ta), SelectorDef::Keys(tb)) = (&a.selector, &b.selector) else { continue };
                let apart = ta.iter().any(|x| tb.iter().any(|y| x.key == y.key && excludes(&x.test, &y.test)));
                if apart {
                    continue;
                }
                // A key one kind requires and the other does not test: the other can refuse it.
                let hint = tb
                    .iter()
                    .find(|y| y.test != KeyCondDef::Absent && !ta.iter().any(|x| x.key == y.key))
                    .map(|y| format!("add `and {} absent` to the selector of `{}`", y.key, a.name))
                    .or_else(|| {
                        ta.iter()
                            .find(|x| x.test != KeyCondDef::Absent && !tb.iter().any(|y| y.key == x.key))
                            .map(|x| format!("add `and {} absent` to the selector of `{}`", x.key, b.name))
                    })
                    .unwrap_or_else(|| "make one selector refuse what the other requires".into());
                let at = |d: &DocumentDef| match &d.selector {
                    SelectorDef::Keys(t) if !t.is_empty() => {
                        Loc { file: t[0].loc.file, span: t[0].loc.span.join(t[t.len() - 1].loc.span) }
                    }
                    _ => d.loc,
                };
                found.push((at(b), at(a), a.name.clone(), b.name.clone(), hint));
            }
        }
        for (here, there, a, b, name) in given_twice {
            let d = self.error(
                "overlapping-kinds",
                here,
                format!("`{a}` and `{b}` are both given as `{name}`: a file given under one name is of one kind"),
            );
            d.labels.push((there, format!("`{a}` is given as `{name}` here")));
        }
        for (here, there, a, b, hint) in found {
            let d = self.error(
                "overlapping-kinds",
                here,
                format!("a document can be both `{a}` and `{b}`: its kind would depend on the order of declaration"),
            );
            d.labels.push((there, format!("`{a}` is selected here")));
            d.help = Some(hint);
        }
    }

    fn checks(&mut self, checks: &[ast::CheckRule], file: u32) -> Checks {
        let mut out: Checks = Default::default();
        for c in checks {
            if c.allow {
                let loc = Loc { file, span: c.span };
                if c.kind != ast::CheckKind::UnknownKey {
                    self.error(
                        "missing-check",
                        loc,
                        format!("`on {} allow`: only unknown keys can be allowed", c.kind.keyword()),
                    )
                    .help = Some(format!("name the rule that reports them: `on {} rule <id>`", c.kind.keyword()));
                } else if checks.iter().any(|o| o.kind == c.kind && !o.allow) {
                    self.error(
                        "duplicate-name",
                        loc,
                        "`on unknown_key` both names a rule and allows the keys".to_string(),
                    );
                }
                continue;
            }
            let i = match c.kind {
                ast::CheckKind::Syntax => CHECK_SYNTAX,
                ast::CheckKind::DuplicateKey => CHECK_DUPLICATE_KEY,
                ast::CheckKind::UnknownKey => CHECK_UNKNOWN_KEY,
                ast::CheckKind::Type => CHECK_TYPE,
                ast::CheckKind::MissingKey => CHECK_MISSING_KEY,
                ast::CheckKind::Empty => CHECK_EMPTY,
                ast::CheckKind::Loosen => CHECK_LOOSEN,
                ast::CheckKind::Untrusted => CHECK_UNTRUSTED,
                ast::CheckKind::Order => CHECK_ORDER,
                ast::CheckKind::Claim => CHECK_CLAIM,
                ast::CheckKind::Change => CHECK_CHANGE,
            };
            let loc = Loc { file, span: c.span };
            if out[i].is_some() {
                self.error("duplicate-name", loc, format!("`on {}` is declared twice", c.kind.keyword()));
            }
            out[i] = Some(CheckDef { rule: c.rule.text.clone(), loc });
        }
        out
    }

    fn document(&mut self, d: &ast::DocumentDecl, file: u32, record: RecordId) {
        let loc = Loc { file, span: d.name.span };
        let checks = self.policy.records[record as usize].checks.clone();
        let open = self.policy.records[record as usize].open;
        for (i, kind) in ["syntax", "duplicate_key", "unknown_key", "type"].iter().enumerate() {
            if checks[i].is_none() && !(open && i == CHECK_UNKNOWN_KEY) {
                self.error(
                    "missing-check",
                    loc,
                    format!("document `{}` does not say which rule reports `{kind}` findings", d.name.text),
                )
                .help = Some(format!("add `on {kind} rule <id>` to the document"));
            }
        }
        let forbids = d
            .forbids
            .iter()
            .map(|x| ForbidDef { key: x.key.text.clone(), rule: x.rule.text.clone(), loc: Loc { file, span: x.span } })
            .collect();
        let selector = match &d.selector {
            ast::Selector::Keys(tests) => SelectorDef::Keys(
                tests
                    .iter()
                    .map(|t| KeyTestDef {
                        key: t.key.text.clone(),
                        test: match &t.test {
                            ast::KeyCond::Absent => KeyCondDef::Absent,
                            ast::KeyCond::Present => KeyCondDef::Present,
                            ast::KeyCond::Equals(v) => KeyCondDef::Equals(v.text.clone()),
                        },
                        loc: Loc { file, span: t.span },
                    })
                    .collect(),
            ),
            ast::Selector::Markdown { marker, rule } => SelectorDef::Markdown {
                marker: marker.text.clone(),
                rule: CheckDef { rule: rule.text.clone(), loc: Loc { file, span: rule.span } },
            },
            ast::Selector::Given(name) => SelectorDef::Given { name: name.text.clone() },
        };
        if let (Some(span), false) = (d.unreadable_missing, matches!(d.selector, ast::Selector::Given(_))) {
            self.error(
                "type-mismatch",
                Loc { file, span },
                format!(
                    "`on unreadable missing` is for a kind given under a name; `{}` is chosen by its content, so a file that cannot be read is never one",
                    d.name.text
                ),
            )
            .help = Some("select the kind with `given \"NAME\"`, or remove the clause".into());
        }
        // The lines of a JSON Lines file fill a top-level list of the kind.
        let lines_into = self.list_field(d, d.lines_into.as_ref(), "lines", file, record);
        // A root that is a list fills a top-level list of the kind.
        let list_into = self.list_field(d, d.list_into.as_ref(), "list", file, record);
        self.policy.documents.push(DocumentDef {
            name: d.name.text.clone(),
            binder: d.binder.text.clone(),
            selector,
            record,
            all_binder: d.all_binder.as_ref().map(|n| n.text.clone()),
            lines_into,
            list_into,
            unreadable_missing: d.unreadable_missing.is_some(),
            checks,
            forbids,
            at_most_one: d.at_most_one.map(|span| Loc { file, span }),
            docs: d.docs.clone(),
            loc,
        });
    }

    /// The top-level list field a `lines into` or `list into` clause names,
    /// or the error that it names no list field of the kind.
    fn list_field(
        &mut self,
        d: &ast::DocumentDecl,
        into: Option<&ast::Name>,
        clause: &str,
        file: u32,
        record: RecordId,
    ) -> Option<String> {
        into.and_then(|n| {
            let rec = &self.policy.records[record as usize];
            let here = Loc { file, span: n.span };
            match rec.field(&n.text).map(|i| &rec.fields[i].ty) {
                Some(Ty::List(_)) => Some(n.text.clone()),
                Some(Ty::Error) => None,
                Some(_) => {
                    self.error(
                        "type-mismatch",
                        here,
                        format!("`{clause} into {}` needs a list field, and `{}` is not a list", n.text, n.text),
                    );
                    None
                }
                None => {
                    let names: Vec<String> = rec.fields.iter().map(|f| f.name.clone()).collect();
                    let names: Vec<&str> = names.iter().map(String::as_str).collect();
                    self.unknown_name(here, &format!("field:{}", d.name.text), &n.text, &names);
                    None
                }
            }
        })
    }

    fn field(&mut self, field: &ast::Field, file: u32) -> FieldDef {
        let (ty, int_min) = self.type_expr(&field.ty, file);
        if let Some((_, span)) = field.growth
            && !matches!(ty, Ty::List(_) | Ty::Map(..) | Ty::Error)
        {
            let t = self.ty_name(&ty);
            self.error(
                "type-mismatch",
                Loc { file, span },
                format!("`{}` is a `{t}`: only a list or a map grows or shrinks tighter", field.name.text),
            );
        }
        if let Some(span) = field.one
            && !matches!(ty, Ty::List(_) | Ty::Error)
        {
            self.error(
                "type-mismatch",
                Loc { file, span },
                format!("`{}` is not a list: only a list may be written `or one`", field.name.text),
            );
        }
        let complete = match (field.complete, &ty) {
            (None, _) => false,
            (Some(_), Ty::Map(k, _)) if matches!(**k, Ty::Enum(_)) => true,
            (Some(span), _) => {
                self.error(
                    "type-mismatch",
                    Loc { file, span },
                    format!(
                        "`{}` is not a map keyed by an enumeration: only such a map can be `complete`",
                        field.name.text
                    ),
                );
                false
            }
        };
        FieldDef {
            name: field.name.text.clone(),
            ty,
            int_min,
            one: field.one.is_some(),
            complete,
            nonempty: names_text(&field.ty),
            optional: field.optional || field.default.is_some(),
            // `ref T`, or `map K -> ref T`: every value of the map names a file.
            is_ref: match &field.ty {
                ast::TypeExpr::Ref(..) => true,
                ast::TypeExpr::Map(_, value, _) => matches!(**value, ast::TypeExpr::Ref(..)),
                _ => false,
            },
            nullable: field.nullable.is_some(),
            default: None,
            bounds: Vec::new(),
            unique: None,
            invalid: field.invalid.as_ref().map(|r| CheckDef { rule: r.text.clone(), loc: Loc { file, span: r.span } }),
            growth: field.growth.map(|(g, _)| g),
            docs: field.docs.clone(),
            loc: Loc { file, span: field.name.span },
        }
    }

    /// The type of the values a default or a bound applies to: a map's values, or the field itself.
    fn cell_type(ty: &Ty) -> &Ty {
        match ty {
            Ty::Map(_, v) => v,
            t => t,
        }
    }

    fn field_clauses(&mut self, record: RecordId, field: &ast::Field, file: u32) {
        let Some(index) = self.policy.records[record as usize].field(&field.name.text) else { return };
        let ty = self.policy.records[record as usize].fields[index].ty.clone();
        let cell = Self::cell_type(&ty).clone();
        let mut default = None;
        if let Some(d) = &field.default {
            default = match d {
                ast::DefaultValue::Column(c) => self.column(c, file).and_then(|(m, col)| {
                    let cty = self.policy.matrices[m as usize].columns[col].ty.clone();
                    let loc = Loc { file, span: c.span };
                    if cty != cell && cell != Ty::Error && cty != Ty::Error {
                        let (a, b) = (self.ty_name(&cty), self.ty_name(&cell));
                        self.error(
                            "type-mismatch",
                            loc,
                            format!(
                                "column `{}` holds `{a}` but field `{}` holds `{b}`",
                                c.column.text, field.name.text
                            ),
                        );
                        return None;
                    }
                    Some(DefaultDef::Column { matrix: m, column: col, loc })
                }),
                ast::DefaultValue::Literal(l) => Some(DefaultDef::Value(self.literal_value(l, &cell, file))),
                ast::DefaultValue::EmptyList(span) => {
                    if !matches!(ty, Ty::List(_)) {
                        self.error(
                            "type-mismatch",
                            Loc { file, span: *span },
                            format!("`[]` is a list but field `{}` is not", field.name.text),
                        );
                        None
                    } else {
                        let origin = Origin::policy(Loc { file, span: *span });
                        Some(DefaultDef::Value(Val::new(ValKind::List(Arc::new(Vec::new())), origin)))
                    }
                }
                ast::DefaultValue::EmptyMap(span) => {
                    if !matches!(ty, Ty::Record(_) | Ty::Map(..)) {
                        self.error(
                            "type-mismatch",
                            Loc { file, span: *span },
                            format!("`{{}}` is a record or a map but field `{}` is neither", field.name.text),
                        );
                        None
                    } else {
                        Some(DefaultDef::Empty(Loc { file, span: *span }))
                    }
                }
            };
        }
        let mut bounds = Vec::new();
        for b in &field.bounds {
            let Some((m, col)) = self.column(&b.column, file) else { continue };
            let cty = self.policy.matrices[m as usize].columns[col].ty.clone();
            let loc = Loc { file, span: b.span };
            if cty != cell && cell != Ty::Error && cty != Ty::Error {
                let (a, c) = (self.ty_name(&cty), self.ty_name(&cell));
                self.error("type-mismatch", loc, format!("a bound of type `{a}` on a field of type `{c}`"));
                continue;
            }
            let orderable = match &cell {
                Ty::Int | Ty::Bool | Ty::Error => true,
                Ty::Enum(e) => self.policy.enums[*e as usize].order == EnumOrder::TightestFirst,
                _ => false,
            };
            if !orderable {
                let c = self.ty_name(&cell);
                self.error("unordered-bound", loc, format!("`{c}` has no order to tighten along")).help =
                    Some("a bound needs an int, a bool, or an enumeration declared `tightest_first`".into());
                continue;
            }
            bounds.push(BoundDef { kind: b.kind, matrix: m, column: col, rule: b.rule.text.clone(), loc });
        }
        let mut unique = None;
        if let Some(rule) = &field.unique {
            let loc = Loc { file, span: rule.span };
            match &ty {
                Ty::List(elem) if self.has_identity(elem) => unique = Some(CheckDef { rule: rule.text.clone(), loc }),
                _ => {
                    let t = self.ty_name(&ty);
                    self.error(
                        "count-identity",
                        loc,
                        format!("`unique` needs a list of things with an identity, not `{t}`"),
                    )
                    .help = Some("declare `identity FIELD` on the record".into());
                }
            }
        }
        let def = &mut self.policy.records[record as usize].fields[index];
        def.default = default;
        def.bounds = bounds;
        def.unique = unique;
    }

    // ------------------------------------------------------------ layers

    fn lower_layers(&mut self, files: &[&ast::SourceFile]) {
        for (f, file) in files.iter().enumerate() {
            let f = f as u32;
            for item in &file.items {
                let ast::Item::Layers(l) = item else { continue };
                let loc = Loc { file: f, span: l.document.span };
                let Some(Global::Document(doc, _)) = self.globals.get(&l.document.text).map(|g| g.0) else {
                    let names: Vec<String> = self.policy.documents.iter().map(|d| d.name.clone()).collect();
                    let names: Vec<&str> = names.iter().map(String::as_str).collect();
                    self.unknown_name(loc, "document kind", &l.document.text, &names);
                    continue;
                };
                if self.policy.layers.iter().any(|x| x.document == doc) {
                    self.error("duplicate-name", loc, format!("`{}` has its layers declared twice", l.document.text));
                    continue;
                }
                let record = self.policy.documents[doc as usize].record;
                let field_names: Vec<String> =
                    self.policy.records[record as usize].fields.iter().map(|x| x.name.clone()).collect();
                let check_field = |lw: &mut Lowerer, n: &ast::Name| {
                    if !field_names.contains(&n.text) {
                        let names: Vec<&str> = field_names.iter().map(String::as_str).collect();
                        lw.unknown_name(
                            Loc { file: f, span: n.span },
                            &format!("field:{}", l.document.text),
                            &n.text,
                            &names,
                        );
                    }
                };
                if let Some(key) = &l.claim {
                    check_field(self, key);
                }
                let mut layers: Vec<String> = Vec::new();
                for layer in &l.layers {
                    let lloc = Loc { file: f, span: layer.name.span };
                    if layers.contains(&layer.name.text) {
                        self.error("duplicate-name", lloc, format!("layer `{}` is declared twice", layer.name.text));
                        continue;
                    }
                    layers.push(layer.name.text.clone());
                }
                // An unbound document is of the last layer: with one layer, it would be trusted.
                if layers.len() < 2 {
                    self.error(
                        "missing-check",
                        loc,
                        format!(
                            "the layers of `{}` declare {} layer(s); they need at least two",
                            l.document.text,
                            layers.len()
                        ),
                    )
                    .help = Some(
                        "an unbound document is of the last layer: declare a least trusted one, e.g. `layer untrusted`"
                            .into(),
                    );
                    continue;
                }
                // The claim key's enumeration, if it has one, names exactly the declared layers.
                if let Some(key) = &l.claim
                    && let Some(fi) = self.policy.records[record as usize].field(&key.text)
                    && let Ty::Enum(e) = self.policy.records[record as usize].fields[fi].ty
                {
                    let variants = self.policy.enums[e as usize].variants.clone();
                    for layer in &l.layers {
                        if !variants.contains(&layer.name.text) {
                            let name = self.policy.enums[e as usize].name.clone();
                            self.error(
                                "unknown-variant",
                                Loc { file: f, span: layer.name.span },
                                format!("`{}` is not a variant of `{name}`", layer.name.text),
                            );
                        }
                    }
                    for v in &variants {
                        if !layers.contains(v) {
                            let name = self.policy.enums[e as usize].name.clone();
                            self.error(
                                "unknown-variant",
                                Loc { file: f, span: key.span },
                                format!(
                                    "`{name}` has the variant `{v}`, which is not a layer of `{}`",
                                    l.document.text
                                ),
                            );
                        }
                    }
                }
                let mut only = Vec::new();
                for (layer, fields) in &l.only {
                    let Some(i) = layers.iter().position(|x| *x == layer.text) else {
                        let names: Vec<&str> = layers.iter().map(String::as_str).collect();
                        self.unknown_name(Loc { file: f, span: layer.span }, "layer", &layer.text, &names);
                        continue;
                    };
                    for field in fields {
                        check_field(self, field);
                        only.push((field.text.clone(), i));
                    }
                }
                for field in &l.free {
                    check_field(self, field);
                }
                let checks = self.checks(&l.checks, f);
                let trusted = l.trusted.as_ref().and_then(|(layer, rule)| {
                    let Some(i) = layers.iter().position(|x| *x == layer.text) else {
                        let names: Vec<&str> = layers.iter().map(String::as_str).collect();
                        self.unknown_name(Loc { file: f, span: layer.span }, "layer", &layer.text, &names);
                        return None;
                    };
                    Some((i, CheckDef { rule: rule.text.clone(), loc: Loc { file: f, span: rule.span } }))
                });
                // A separate kind merges nothing: no field is set over another layer's.
                if let Some(span) = l.separate {
                    let merging = l.only.first().map(|(n, _)| n.span).or(l.free.first().map(|n| n.span));
                    for (what, at) in [("standalone", l.standalone), ("sets", merging)] {
                        let Some(at) = at else { continue };
                        self.error(
                            "separate-layers",
                            Loc { file: f, span: at },
                            format!(
                                "the layers of `{}` are `separate`: its documents are never merged, so `{what}` has no meaning here",
                                l.document.text
                            ),
                        )
                        .labels
                        .push((Loc { file: f, span }, "declared separate here".into()));
                    }
                }
                for (i, kind) in [
                    (CHECK_LOOSEN, "loosen"),
                    (CHECK_UNTRUSTED, "untrusted"),
                    (CHECK_UNKNOWN_KEY, "unknown_key"),
                    (CHECK_ORDER, "order"),
                    (CHECK_CLAIM, "claim"),
                ] {
                    // Only what can happen to a separate kind's documents needs a rule.
                    let needed = match i {
                        CHECK_CLAIM => l.claim.is_some(),
                        CHECK_ORDER => true,
                        _ => l.separate.is_none(),
                    };
                    if checks[i].is_none() && needed {
                        self.error(
                            "missing-check",
                            loc,
                            format!(
                                "the layers of `{}` do not say which rule reports `{kind}` findings",
                                l.document.text
                            ),
                        )
                        .help = Some(format!("add `on {kind} rule <id>`"));
                    }
                }
                self.policy.layers.push(LayersDef {
                    document: doc,
                    claim: l.claim.as_ref().map(|k| k.text.clone()),
                    standalone: l.standalone.is_some(),
                    separate: l.separate.is_some(),
                    trusted,
                    layers,
                    only,
                    free: l.free.iter().map(|n| n.text.clone()).collect(),
                    checks,
                    loc,
                });
            }
        }
    }

    // ------------------------------------------------------------ rules

    fn lower_rules(&mut self, files: &[&ast::SourceFile]) {
        let mut lowered = Vec::new();
        for (f, file) in files.iter().enumerate() {
            for item in &file.items {
                if let ast::Item::Rule(r) = item {
                    lowered.push(RuleLowerer::new(self, files, f as u32).rule(r));
                }
            }
        }
        self.policy.rules = self.evaluation_order(lowered);
        for (f, file) in files.iter().enumerate() {
            for item in &file.items {
                if let ast::Item::Question(q) = item {
                    let question = RuleLowerer::new(self, files, f as u32).question(q);
                    // A runtime authoriser tells questions apart by their action alone.
                    if let Some(first) = self.policy.questions.iter().find(|o| o.action == question.action) {
                        let first = first.loc;
                        self.error(
                            "duplicate-name",
                            Loc { file: f as u32, span: q.action.span },
                            format!("`{}` is the action of two questions", question.action),
                        )
                        .labels
                        .push((first, "first asked here".into()));
                    }
                    self.policy.questions.push(question);
                }
            }
        }
        for (f, file) in files.iter().enumerate() {
            for item in &file.items {
                if let ast::Item::Table(t) = item {
                    let table = RuleLowerer::new(self, files, f as u32).table(t);
                    self.policy.tables.push(table);
                }
            }
        }
        // Structural rule ids may not be taken by a `rule` too.
        let structural: Vec<(String, Loc)> = {
            let p = &self.policy;
            let mut v = Vec::new();
            for d in &p.documents {
                v.extend(d.forbids.iter().map(|x| (x.rule.clone(), x.loc)));
            }
            for r in &p.records {
                v.extend(r.checks.iter().flatten().map(|c| (c.rule.clone(), c.loc)));
                for fd in &r.fields {
                    v.extend(fd.bounds.iter().map(|b| (b.rule.clone(), b.loc)));
                    v.extend(fd.unique.iter().map(|u| (u.rule.clone(), u.loc)));
                }
            }
            v
        };
        for (id, loc) in structural {
            if let Some(first) = self.rule_ids.get(&id).copied() {
                let d = self.error("duplicate-rule", first, format!("rule `{id}` is defined twice"));
                d.labels.push((loc, "also the rule of this schema check".into()));
                d.help = Some("a schema check and a rule cannot share an identifier".into());
            }
        }
    }
}

impl Lowerer {
    /// Orders rules so that a rule asking whether others `holds` runs after
    /// them; a cycle is an error (the rules stay in declaration order).
    fn evaluation_order(&mut self, rules: Vec<(RuleDef, Vec<String>)>) -> Vec<RuleDef> {
        let ids: Vec<String> = rules.iter().map(|(r, _)| r.id.clone()).collect();
        let deps: Vec<Vec<usize>> = rules
            .iter()
            .map(|(_, patterns)| {
                (0..ids.len()).filter(|&j| patterns.iter().any(|p| rule_matches(p, &ids[j]))).collect()
            })
            .collect();
        let mut order = Vec::new();
        let mut state = vec![0u8; rules.len()]; // 0 new, 1 visiting, 2 done
        fn visit(i: usize, deps: &[Vec<usize>], state: &mut [u8], order: &mut Vec<usize>) -> Option<usize> {
            match state[i] {
                2 => return None,
                1 => return Some(i),
                _ => {}
            }
            state[i] = 1;
            for &d in &deps[i] {
                if let Some(c) = visit(d, deps, state, order) {
                    return Some(c);
                }
            }
            state[i] = 2;
            order.push(i);
            None
        }
        for i in 0..rules.len() {
            if let Some(c) = visit(i, &deps, &mut state, &mut order) {
                let loc = rules[c].0.loc;
                self.error("rule-cycle", loc, format!("rule `{}` depends on itself through `holds`", ids[c]));
                return rules.into_iter().map(|(r, _)| r).collect();
            }
        }
        let mut slots: Vec<Option<RuleDef>> = rules.into_iter().map(|(r, _)| Some(r)).collect();
        order.into_iter().filter_map(|i| slots[i].take()).collect()
    }
}

/// Whether a rule id matches a pattern: the id itself, or `prefix.*`.
pub fn rule_matches(pattern: &str, id: &str) -> bool {
    match pattern.strip_suffix(".*") {
        Some(prefix) => id.strip_prefix(prefix).is_some_and(|rest| rest.starts_with('.')),
        None => pattern == id,
    }
}

/// The most function calls one rule may expand to. A function is expanded at
/// each call, so a function that calls another twice, which calls another
/// twice, ... doubles the rule at each level; this bounds the work and the
/// size of the lowered rule.
pub const MAX_EXPANSIONS: usize = 4096;

/// The most function calls that may be open inside each other while expanding
/// a rule (the lowered expression's depth grows with each).
pub const MAX_EXPANSION_DEPTH: usize = 32;

/// The deepest a rule's lowered expression may nest, its functions expanded.
pub const MAX_LOWERED_DEPTH: usize = 128;

/// Recursion over expressions grows the stack by `STACK_SEGMENT` bytes when
/// less than `RED_ZONE` is left (rustc's `ensure_sufficient_stack`).
pub(crate) const RED_ZONE: usize = 128 * 1024;
pub(crate) const STACK_SEGMENT: usize = 2 * 1024 * 1024;

/// Lowers one rule, expanding the functions it calls.
struct RuleLowerer<'a> {
    lw: &'a mut Lowerer,
    files: &'a [&'a ast::SourceFile],
    file: u32,
    scope: Vec<(String, Slot, Ty)>,
    slots: u32,
    reads: Vec<DocKindId>,
    /// Rule patterns named by `holds`: this rule runs after them.
    after: Vec<String>,
    /// Functions being expanded, innermost last.
    expanding: Vec<String>,
    /// Function calls expanded so far in this rule.
    expansions: usize,
    /// How deep `expr` is, expanded functions included.
    depth: usize,
    /// Whether this rule's expansion or depth limit was reported (once per rule).
    reported_expansions: bool,
    reported_depth: bool,
    /// Quantifier variables of the rule's own `require`, for its message.
    witnesses: Vec<(String, Slot, Ty)>,
    record_witnesses: bool,
    /// The calls expanded whose results are memoised (see [`CallHead`]).
    calls: Vec<CallHead>,
}

impl<'a> RuleLowerer<'a> {
    fn new(lw: &'a mut Lowerer, files: &'a [&'a ast::SourceFile], file: u32) -> Self {
        RuleLowerer {
            lw,
            files,
            file,
            scope: Vec::new(),
            slots: 0,
            reads: Vec::new(),
            after: Vec::new(),
            expanding: Vec::new(),
            expansions: 0,
            depth: 0,
            reported_expansions: false,
            reported_depth: false,
            witnesses: Vec::new(),
            record_witnesses: false,
            calls: Vec::new(),
        }
    }

    fn loc(&self, span: Span) -> Loc {
        Loc { file: self.file, span }
    }

    fn rule(mut self, r: &ast::RuleDecl) -> (RuleDef, Vec<String>) {
        let errors_before = self.lw.diagnostics.len();
        let mut clauses = Vec::new();
        let mut at = None;
        let mut at_by_position = false;
        let mut required = false;
        for clause in r.clauses.iter() {
            if required && !matches!(clause, ast::Clause::At { .. }) {
                self.lw.error("clause-order", self.loc(clause.span()), "only `at` may follow `require`");
            }
            match clause {
                ast::Clause::For { pattern, domain, filter, .. } => {
                    clauses.push(self.for_clause(pattern, domain, filter.as_ref()))
                }
                ast::Clause::When { guard, reason, report, .. } => {
                    let guard = self.boolean(guard);
                    let reason = reason.as_ref().map(|t| self.template(t));
                    clauses.push(ClauseDef::When { guard, reason, report: *report });
                }
                ast::Clause::Let { name, value, .. } => clauses.push(self.let_clause(name, value)),
                ast::Clause::Require { check, outcome, message, span } => {
                    if required {
                        self.lw.error("clause-order", self.loc(*span), "a rule has exactly one `require`");
                    }
                    required = true;
                    self.record_witnesses = true;
                    let check = self.boolean(check);
                    self.record_witnesses = false;
                    let depth = self.scope.len();
                    let witnesses = std::mem::take(&mut self.witnesses);
                    self.scope.extend(witnesses);
                    let message = self.template(message);
                    self.scope.truncate(depth);
                    clauses.push(ClauseDef::Require {
                        check,
                        fail: *outcome == ast::Outcome::Fail,
                        message,
                        loc: self.loc(*span),
                    });
                }
                ast::Clause::At { location, positional, .. } => {
                    at = Some(self.expr(location).0);
                    at_by_position = *positional;
                }
            }
        }
        if !required {
            self.lw
                .error("missing-require", self.loc(r.id.span), format!("rule `{}` has no `require` clause", r.id.text))
                .help = Some("add `require EXPR else fail \"message\"`".into());
        }
        if self.reads.is_empty() && self.lw.diagnostics.len() == errors_before {
            let mut binders: Vec<&String> = self.lw.binders.keys().collect();
            binders.sort();
            let help = match binders.first() {
                Some(b) => format!("a rule judges documents: refer to one, such as `{b}`"),
                None => "a rule judges documents: declare a `document` kind and refer to it".into(),
            };
            self.lw
                .error("reads-nothing", self.loc(r.id.span), format!("rule `{}` reads no document", r.id.text))
                .help = Some(help);
        }
        let rule = RuleDef {
            id: r.id.text.clone(),
            docs: r.docs.clone(),
            reads: self.reads,
            clauses: Lazy::new(clauses),
            at,
            at_by_position,
            slots: self.slots,
            loc: Loc { file: self.file, span: r.id.span },
            calls: {
                let mut calls = self.calls;
                calls.sort_by_key(|c| c.slot);
                calls
            },
        };
        (rule, self.after)
    }

    /// `for PATTERN in DOMAIN [if FILTER]`, in a rule or a table: the pattern's names bound from here on.
    fn for_clause(&mut self, pattern: &ast::Pattern, domain: &ast::Expr, filter: Option<&ast::Expr>) -> ClauseDef {
        let pattern_names = pattern.names();
        let label = doc_path(domain, &self.lw.binders);
        let (d, ty) = self.expr(domain);
        let pattern = self.bind(pattern, &ty, domain.span);
        let filter = filter.map(|f| self.boolean(f));
        let names = pattern_names.iter().map(|n| n.text.clone()).collect();
        ClauseDef::For { pattern, names, domain: d, filter, label }
    }

    /// `let NAME = VALUE`, in a rule or a table: the name bound from here on.
    fn let_clause(&mut self, name: &ast::Name, value: &ast::Expr) -> ClauseDef {
        let (v, ty) = self.expr(value);
        let slot = self.fresh();
        self.scope.push((name.text.clone(), slot, ty));
        ClauseDef::Let { slot, name: name.text.clone(), value: v }
    }

    fn table(mut self, t: &ast::TableDecl) -> TableDef {
        let errors_before = self.lw.diagnostics.len();
        let mut clauses = Vec::new();
        for clause in t.clauses.iter() {
            match clause {
                ast::Clause::For { pattern, domain, filter, .. } => {
                    clauses.push(self.for_clause(pattern, domain, filter.as_ref()))
                }
                ast::Clause::Let { name, value, .. } => clauses.push(self.let_clause(name, value)),
                // INVARIANT: the grammar gives a table only `for` and `let` clauses.
                _ => {}
            }
        }
        let column =
            |lw: &mut Self, c: &ast::TableColumn| ColumnExpr { name: c.name.text.clone(), value: lw.expr(&c.value).0 };
        let row = column(&mut self, &t.row);
        let mut columns = Vec::new();
        for c in &t.columns {
            if c.name.text == t.row.name.text || columns.iter().any(|o: &ColumnExpr| o.name == c.name.text) {
                self.lw.error(
                    "duplicate-name",
                    self.loc(c.name.span),
                    format!("table `{}` has two columns named `{}`", t.id.text, c.name.text),
                );
            }
            columns.push(column(&mut self, c));
        }
        let detail = t.detail.as_ref().map(|(e, _)| self.expr(e).0);
        let line = t.line.as_ref().map(|(l, _)| self.template(l));
        if self.reads.is_empty() && self.lw.diagnostics.len() == errors_before {
            self.lw
                .error("reads-nothing", self.loc(t.id.span), format!("table `{}` reads no document", t.id.text))
                .help = Some("a table shows values of documents: iterate over a kind's documents".into());
        }
        TableDef {
            id: t.id.text.clone(),
            docs: t.docs.clone(),
            body: crate::hir::Lazy::new(crate::hir::TableBody { clauses, row, columns, detail, line }),
            reads: self.reads,
            slots: self.slots,
            loc: Loc { file: self.file, span: t.id.span },
        }
    }

    fn question(mut self, q: &ast::QuestionDecl) -> QuestionDef {
        let mut vars = Vec::new();
        let mut attributes: Vec<(ast::RequestSide, &str)> = Vec::new();
        for v in &q.vars {
            let (domain, ty) = self.expr(&v.domain);
            let pattern = self.bind(&v.pattern, &ty, v.domain.span);
            if attributes.contains(&(v.side, v.attribute.text.as_str())) {
                self.lw.error(
                    "duplicate-name",
                    self.loc(v.attribute.span),
                    format!("two variables of `{}` are the attribute `{}`", q.id.text, v.attribute.text),
                );
            }
            attributes.push((v.side, &v.attribute.text));
            let names = v.pattern.names().iter().map(|n| n.text.clone()).collect();
            vars.push(QuestionVarDef { pattern, names, domain, side: v.side, attribute: v.attribute.text.clone() });
        }
        let allow = self.boolean(&q.allow);
        QuestionDef {
            id: q.id.text.clone(),
            docs: q.docs.clone(),
            action: q.action.text.clone(),
            body: Lazy::new(QuestionBody { vars, allow }),
            reads: self.reads,
            slots: self.slots,
            loc: Loc { file: self.file, span: q.id.span },
        }
    }

    fn fresh(&mut self) -> Slot {
        self.slots += 1;
        self.slots - 1
    }

    fn template(&mut self, t: &ast::Template) -> Template {
        let parts = t
            .parts
            .iter()
            .map(|p| match p {
                ast::TemplatePart::Text(s) => TemplatePart::Text(s.as_str().into()),
                ast::TemplatePart::Hole(e) => TemplatePart::Hole(self.expr(e).0),
            })
            .collect();
        Template { parts }
    }

    fn ty_name(&self, ty: &Ty) -> String {
        self.lw.ty_name(ty)
    }

    fn mismatch(&mut self, span: Span, message: String) {
        self.lw.error("type-mismatch", self.loc(span), message);
    }

    /// Lowers an expression that must be a bool.
    fn boolean(&mut self, e: &ast::Expr) -> Expr {
        let (x, ty) = self.expr(e);
        self.expect(&ty, &Ty::Bool, e);
        x
    }

    fn expect(&mut self, ty: &Ty, want: &Ty, e: &ast::Expr) {
        if ty != want && *ty != Ty::Error {
            let (a, b) = (self.ty_name(want), self.ty_name(ty));
            self.mismatch(e.span, format!("expected `{a}`, found `{b}` in `{}`", print::expr(e)));
        }
    }

    /// Binds a pattern to the elements of a domain of type `ty`.
    fn bind(&mut self, pattern: &ast::Pattern, ty: &Ty, span: Span) -> PatternDef {
        let (first, second): (Ty, Option<Ty>) = match (pattern, ty) {
            (_, Ty::Error) => (Ty::Error, Some(Ty::Error)),
            (ast::Pattern::One(_), Ty::List(t)) => ((**t).clone(), None),
            (ast::Pattern::One(_), Ty::Domain(e)) => (Ty::Enum(*e), None),
            (ast::Pattern::One(_), Ty::Map(k, _)) => ((**k).clone(), None),
            (ast::Pattern::Entry(..), Ty::Map(k, v)) => ((**k).clone(), Some((**v).clone())),
            (ast::Pattern::Entry(..), Ty::List(t)) => (Ty::Int, Some((**t).clone())),
            (ast::Pattern::Pair(..), Ty::Pairs(t)) => ((**t).clone(), Some((**t).clone())),
            _ => {
                let what = match pattern {
                    ast::Pattern::One(_) => "one name",
                    ast::Pattern::Entry(..) => "a key and a value",
                    ast::Pattern::Pair(..) => "a pair",
                };
                let t = self.ty_name(ty);
                self.mismatch(span, format!("cannot bind {what} to the elements of `{t}`"));
                (Ty::Error, Some(Ty::Error))
            }
        };
        let second = second.unwrap_or(Ty::Error);
        match pattern {
            ast::Pattern::One(a) => {
                let s = self.fresh();
                self.scope.push((a.text.clone(), s, first));
                PatternDef::One(s)
            }
            ast::Pattern::Entry(a, b) | ast::Pattern::Pair(a, b) => {
                let s = self.fresh();
                let t = self.fresh();
                self.scope.push((a.text.clone(), s, first));
                self.scope.push((b.text.clone(), t, second));
                if matches!(pattern, ast::Pattern::Pair(..)) { PatternDef::Pair(s, t) } else { PatternDef::Entry(s, t) }
            }
        }
    }

    /// Leaves the scope of a quantifier, remembering its names for the message.
    fn unbind(&mut self, depth: usize) {
        let gone = self.scope.split_off(depth);
        if self.record_witnesses && self.expanding.is_empty() {
            self.witnesses.extend(gone);
        }
    }

    fn expr(&mut self, e: &ast::Expr) -> (Expr, Ty) {
        // Expanded functions nest inside each other: the parser's bound on
        // one item's nesting does not bound the rule's. This does, and so
        // the recursion of lowering and of evaluation.
        if self.depth >= MAX_LOWERED_DEPTH {
            if !self.reported_depth {
                self.reported_depth = true;
                self.lw.error(
                    "expansion-limit",
                    self.loc(e.span),
                    format!("this expression nests deeper than {MAX_LOWERED_DEPTH} levels once its functions are expanded"),
                )
                .help = Some("split the expression with `let`, or call fewer functions inside functions".into());
            }
            return (Expr { kind: ExprKind::Lit(Val::unknown()), text: Text::default() }, Ty::Error);
        }
        self.depth += 1;
        let text = print::expr(e);
        // Debug builds spend kilobytes of stack per level: grow it rather
        // than depend on the caller's thread (a test's or a server's is small).
        let (kind, ty) = stacker::maybe_grow(RED_ZONE, STACK_SEGMENT, || self.expr_kind(e));
        self.depth -= 1;
        (Expr { kind, text: text.into() }, ty)
    }

    fn boxed(&mut self, e: &ast::Expr) -> (Box<Expr>, Ty) {
        let (x, t) = self.expr(e);
        (Box::new(x), t)
    }

    fn expr_kind(&mut self, e: &ast::Expr) -> (ExprKind, Ty) {
        use ast::ExprKind as A;
        match &e.kind {
            A::Lit(l) => {
                let (kind, ty) = match l {
                    ast::Literal::Int(i, _) => (ValKind::Int(*i), Ty::Int),
                    ast::Literal::Bool(b, _) => (ValKind::Bool(*b), Ty::Bool),
                    ast::Literal::Str(s, _) => (ValKind::Str(s.as_str().into()), Ty::Str),
                    ast::Literal::Name(n) => (ValKind::Str(n.text.as_str().into()), Ty::Str),
                };
                (ExprKind::Lit(Val::computed(kind)), ty)
            }
            A::Name(n) => self.name(n),
            A::Field(base, name) => {
                let (b, bt) = self.boxed(base);
                match &bt {
                    Ty::Record(r) => self.record_field(b, *r, &name.text, name.span),
                    Ty::Row(m) => {
                        let def = &self.lw.policy.matrices[*m as usize];
                        match def.columns.iter().position(|c| c.name == name.text) {
                            Some(i) => {
                                let ty = def.columns[i].ty.clone();
                                (ExprKind::Column(b, i), ty)
                            }
                            None => {
                                let names: Vec<String> = def.columns.iter().map(|c| c.name.clone()).collect();
                                let what = format!("column:{}", def.name);
                                let names: Vec<&str> = names.iter().map(String::as_str).collect();
                                self.lw.unknown_name(self.loc(name.span), &what, &name.text, &names);
                                (ExprKind::Lit(Val::unknown()), Ty::Error)
                            }
                        }
                    }
                    Ty::Error => (ExprKind::Lit(Val::unknown()), Ty::Error),
                    other => {
                        let t = self.ty_name(other);
                        self.mismatch(
                            name.span,
                            format!("`{}` is of type `{t}`, which has no field `{}`", print::expr(base), name.text),
                        );
                        (ExprKind::Lit(Val::unknown()), Ty::Error)
                    }
                }
            }
            A::Index(base, index) => {
                let (b, bt) = self.boxed(base);
                match bt {
                    Ty::Map(k, v) => {
                        let (i, _) = self.coerced(index, &k);
                        (ExprKind::MapGet(b, Box::new(i)), *v)
                    }
                    Ty::Record(r) => match &index.kind {
                        ast::ExprKind::Lit(ast::Literal::Str(name, span)) => self.record_field(b, r, name, *span),
                        _ => {
                            self.mismatch(index.span, "a record is indexed by a field name in quotes".into());
                            (ExprKind::Lit(Val::unknown()), Ty::Error)
                        }
                    },
                    Ty::List(t) => {
                        let (i, it) = self.expr(index);
                        self.expect(&it, &Ty::Int, index);
                        (ExprKind::ListGet(b, Box::new(i)), *t)
                    }
                    Ty::Matrix(m) => {
                        let key = self.lw.policy.matrices[m as usize].key_enum;
                        let (i, _) = self.coerced(index, &Ty::Enum(key));
                        (ExprKind::MatrixRow(m, Box::new(i)), Ty::Row(m))
                    }
                    Ty::Error => (ExprKind::Lit(Val::unknown()), Ty::Error),
                    other => {
                        let t = self.ty_name(&other);
                        self.mismatch(
                            e.span,
                            format!("`{}` is of type `{t}`, which cannot be indexed", print::expr(base)),
                        );
                        (ExprKind::Lit(Val::unknown()), Ty::Error)
                    }
                }
            }
            A::Not(inner) => {
                let x = self.boolean(inner);
                (ExprKind::Not(Box::new(x)), Ty::Bool)
            }
            A::Binary(op, a, b) => self.binary(*op, a, b, e),
            A::Call(name, args) => self.call(name, args, e),
            A::List(items) | A::Set(items) => {
                let mut elem = None;
                let mut out = Vec::new();
                for item in items {
                    let (x, t) = match &elem {
                        Some(want) => self.coerced(item, want),
                        None => self.expr(item),
                    };
                    match &elem {
                        None => elem = Some(t),
                        Some(want) if !compatible(want, &t) => {
                            let (a, b) = (self.ty_name(want), self.ty_name(&t));
                            self.mismatch(
                                item.span,
                                format!("a list of `{a}` cannot hold `{}` of type `{b}`", print::expr(item)),
                            );
                        }
                        _ => {}
                    }
                    out.push(x);
                }
                (ExprKind::List(out), Ty::List(Box::new(elem.unwrap_or(Ty::Error))))
            }
            A::Quant { kind, pattern, domain, body } => {
                let (d, dt) = self.boxed(domain);
                let depth = self.scope.len();
                let p = self.bind(pattern, &dt, domain.span);
                let body = self.boolean(body);
                self.unbind(depth);
                let every = *kind == ast::Quantifier::Every;
                (ExprKind::Quant { every, pattern: p, domain: d, body: Box::new(body) }, Ty::Bool)
            }
            A::CountBy { var, domain, key } => {
                let (d, dt) = self.boxed(domain);
                let depth = self.scope.len();
                let p = self.bind(&ast::Pattern::One(var.clone()), &dt, domain.span);
                let (k, kt) = self.boxed(key);
                if !matches!(kt, Ty::Bool | Ty::Int | Ty::Str | Ty::Enum(_) | Ty::Error) {
                    let t = self.ty_name(&kt);
                    self.mismatch(key.span, format!("a count key must be a scalar, not `{t}`"));
                }
                self.scope.truncate(depth);
                let PatternDef::One(slot) = p else { return (ExprKind::Lit(Val::unknown()), Ty::Error) };
                (ExprKind::CountBy { slot, domain: d, key: k }, Ty::Int)
            }
            A::Comprehension { value, pattern, domain, filter } => {
                let (d, dt) = self.boxed(domain);
                let depth = self.scope.len();
                let p = self.bind(pattern, &dt, domain.span);
                let filter = filter.as_ref().map(|f| Box::new(self.boolean(f)));
                let (v, vt) = self.boxed(value);
                self.scope.truncate(depth);
                (ExprKind::Comprehension { value: v, pattern: p, domain: d, filter }, Ty::List(Box::new(vt)))
            }
        }
    }

    /// A field of a record, by name (`r.field` or `r["field"]`).
    fn record_field(&mut self, base: Box<Expr>, record: RecordId, name: &str, span: Span) -> (ExprKind, Ty) {
        let rec = &self.lw.policy.records[record as usize];
        if let Some(i) = rec.field(name) {
            let ty = rec.fields[i].ty.read();
            return (ExprKind::Field(base, i), ty);
        }
        let names: Vec<String> = rec.fields.iter().map(|f| f.name.clone()).collect();
        let what = format!("field:{}", rec.name);
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        self.lw.unknown_name(self.loc(span), &what, name, &names);
        (ExprKind::Lit(Val::unknown()), Ty::Error)
    }

    fn name(&mut self, n: &ast::Name) -> (ExprKind, Ty) {
        if let Some((_, slot, ty)) = self.scope.iter().rev().find(|(s, ..)| *s == n.text) {
            return (ExprKind::Var(*slot), ty.clone());
        }
        if let Some(&doc) = self.lw.binders.get(&n.text) {
            if !self.reads.contains(&doc) {
                self.reads.push(doc);
            }
            let record = self.lw.policy.documents[doc as usize].record;
            return (ExprKind::Doc(doc), Ty::Record(record));
        }
        if let Some(&doc) = self.lw.all_binders.get(&n.text) {
            if !self.reads.contains(&doc) {
                self.reads.push(doc);
            }
            let record = self.lw.policy.documents[doc as usize].record;
            return (ExprKind::Docs(doc), Ty::List(Box::new(Ty::Record(record))));
        }
        match self.lw.globals.get(&n.text).map(|g| g.0) {
            Some(Global::Matrix(m)) => return (ExprKind::Matrix(m), Ty::Matrix(m)),
            Some(Global::Enum(e)) => return (ExprKind::Domain(e), Ty::Domain(e)),
            Some(Global::Fn(..)) => {
                self.mismatch(n.span, format!("function `{}` must be called: `{}(...)`", n.text, n.text));
                return (ExprKind::Lit(Val::unknown()), Ty::Error);
            }
            Some(_) => {
                self.mismatch(n.span, format!("`{}` is a type, not a value", n.text));
                return (ExprKind::Lit(Val::unknown()), Ty::Error);
            }
            None => {}
        }
        let mut candidates: Vec<String> = self.scope.iter().map(|s| s.0.clone()).collect();
        candidates.extend(self.lw.global_names().into_iter().map(String::from));
        let candidates: Vec<&str> = candidates.iter().map(String::as_str).collect();
        self.lw.unknown_name(self.loc(n.span), "name", &n.text, &candidates);
        (ExprKind::Lit(Val::unknown()), Ty::Error)
    }

    /// Lowers `e` where a `want` is expected: a string literal becomes a
    /// variant when `want` is an enumeration (checked), and likewise for the
    /// items of a list literal.
    fn coerced(&mut self, e: &ast::Expr, want: &Ty) -> (Expr, Ty) {
        match (&e.kind, want) {
            (ast::ExprKind::Lit(ast::Literal::Str(s, span)), Ty::Enum(en)) => {
                let text = print::expr(e);
                let loc = self.loc(*span);
                let kind = match self.lw.variant_or_error(*en, s, loc) {
                    Some(v) => ValKind::Enum(*en, v),
                    None => ValKind::Absent(crate::value::Absence::Unknown),
                };
                (Expr { kind: ExprKind::Lit(Val::computed(kind)), text: text.into() }, want.clone())
            }
            (ast::ExprKind::List(items) | ast::ExprKind::Set(items), Ty::List(elem)) => {
                let text = print::expr(e);
                let out: Vec<Expr> = items
                    .iter()
                    .map(|i| {
                        let (x, t) = self.coerced(i, elem);
                        if !compatible(&t, elem) {
                            let (a, b) = (self.ty_name(elem), self.ty_name(&t));
                            self.mismatch(i.span, format!("expected `{a}`, found `{b}` in `{}`", print::expr(i)));
                        }
                        x
                    })
                    .collect();
                (Expr { kind: ExprKind::List(out), text: text.into() }, want.clone())
            }
            _ => self.expr(e),
        }
    }

    /// Lowers two operands that must agree, coercing a literal side to the other's type.
    fn pair(&mut self, a: &ast::Expr, b: &ast::Expr) -> (Expr, Ty, Expr, Ty) {
        let a_lit = is_string_literal(a);
        if a_lit && !is_string_literal(b) {
            let (y, bt) = self.expr(b);
            let (x, at) = self.coerced(a, &bt);
            (x, at, y, bt)
        } else {
            let (x, at) = self.expr(a);
            let (y, bt) = self.coerced(b, &at);
            (x, at, y, bt)
        }
    }

    fn binary(&mut self, op: ast::BinOp, a: &ast::Expr, b: &ast::Expr, e: &ast::Expr) -> (ExprKind, Ty) {
        use ast::BinOp as B;
        match op {
            B::And | B::Or => {
                let x = Box::new(self.boolean(a));
                let y = Box::new(self.boolean(b));
                (if op == B::And { ExprKind::And(x, y) } else { ExprKind::Or(x, y) }, Ty::Bool)
            }
            B::Eq | B::Ne | B::Lt | B::Le | B::Gt | B::Ge => {
                let (x, at, y, bt) = self.pair(a, b);
                self.comparable(&at, &bt, e);
                let ordering = !matches!(op, B::Eq | B::Ne);
                if ordering && !self.ordered(&at) {
                    let t = self.ty_name(&at);
                    self.mismatch(e.span, format!("`{t}` has no order, so `{}` cannot compare it", op.symbol()))
                }
                let cmp = match op {
                    B::Eq => Cmp::Eq,
                    B::Ne => Cmp::Ne,
                    B::Lt => Cmp::Lt,
                    B::Le => Cmp::Le,
                    B::Gt => Cmp::Gt,
                    _ => Cmp::Ge,
                };
                (ExprKind::Compare(cmp, Box::new(x), Box::new(y)), Ty::Bool)
            }
            B::TighterThan | B::LooserThan => {
                let (x, at, y, bt) = self.pair(a, b);
                self.comparable(&at, &bt, e);
                let tight = match &at {
                    Ty::Enum(en) => self.lw.policy.enums[*en as usize].order == EnumOrder::TightestFirst,
                    Ty::Error => true,
                    _ => false,
                };
                if !tight {
                    let t = self.ty_name(&at);
                    self.mismatch(
                        e.span,
                        format!("`{}` needs an enumeration declared `tightest_first`, not `{t}`", op.symbol()),
                    );
                }
                let (x, y) = if op == B::TighterThan { (x, y) } else { (y, x) };
                (ExprKind::Tighter(Box::new(x), Box::new(y)), Ty::Bool)
            }
            B::In | B::NotIn => {
                let (y, bt) = self.expr(b);
                if bt == Ty::Net {
                    // `ip(h) in net("10.0.0.0/8")`: membership of an address in a network.
                    let (x, at) = self.expr(a);
                    self.expect(&at, &Ty::Str, a);
                    let found = ExprKind::Builtin(Builtin::InNet, vec![x, y]);
                    return if op == B::In {
                        (found, Ty::Bool)
                    } else {
                        (ExprKind::Not(Box::new(Expr { kind: found, text: print::expr(e).into() })), Ty::Bool)
                    };
                }
                let elem = match &bt {
                    Ty::List(t) => (**t).clone(),
                    Ty::Map(k, _) => (**k).clone(),
                    Ty::Domain(en) => Ty::Enum(*en),
                    Ty::Error => Ty::Error,
                    other => {
                        let t = self.ty_name(other);
                        self.mismatch(
                            b.span,
                            format!("`in` needs a list, a map or an enumeration on its right, not `{t}`"),
                        );
                        Ty::Error
                    }
                };
                let (x, at) = self.coerced(a, &elem);
                // `x in {"a", "b"}` with `x` an enumeration: read the literals as variants.
                let y = if matches!(at, Ty::Enum(_)) && elem == Ty::Str {
                    self.coerced(b, &Ty::List(Box::new(at.clone()))).0
                } else {
                    self.comparable(&at, &elem, e);
                    y
                };
                let found = ExprKind::In(Box::new(x), Box::new(y));
                if op == B::In {
                    (found, Ty::Bool)
                } else {
                    (ExprKind::Not(Box::new(Expr { kind: found, text: print::expr(e).into() })), Ty::Bool)
                }
            }
            B::Coalesce => {
                let (x, at, y, bt) = self.pair(a, b);
                self.comparable(&at, &bt, e);
                let ty = if at == Ty::Error { bt } else { at };
                (ExprKind::Coalesce(Box::new(x), Box::new(y)), ty)
            }
            B::Concat => {
                let (x, at, y, bt) = self.pair(a, b);
                if !matches!(at, Ty::List(_) | Ty::Error) {
                    let t = self.ty_name(&at);
                    self.mismatch(a.span, format!("`++` joins lists, not `{t}`"));
                }
                self.comparable(&at, &bt, e);
                (ExprKind::Concat(Box::new(x), Box::new(y)), if at == Ty::Error { bt } else { at })
            }
            B::Add | B::Sub | B::Mul => {
                let (x, at) = self.expr(a);
                let (y, bt) = self.expr(b);
                let ty = self.arithmetic(op, &at, &bt, a, b, e);
                let (x, y) = (Box::new(x), Box::new(y));
                let kind = match op {
                    B::Add => ExprKind::Add(x, y),
                    B::Sub => ExprKind::Sub(x, y),
                    _ => ExprKind::Mul(x, y),
                };
                (kind, ty)
            }
        }
    }

    /// The type of `a + b`, `a - b` or `a * b`: ints; two strings join; an
    /// instant minus an instant is a duration; an instant plus or minus a duration an instant;
    /// durations add, subtract and are multiplied by an int.
    fn arithmetic(&mut self, op: ast::BinOp, at: &Ty, bt: &Ty, a: &ast::Expr, b: &ast::Expr, e: &ast::Expr) -> Ty {
        use ast::BinOp as B;
        let found = match (op, at, bt) {
            (_, Ty::Error, _) | (_, _, Ty::Error) => Some(Ty::Error),
            (_, Ty::Int, Ty::Int) => Some(Ty::Int),
            // Strings join: `summary + " Rebound ..."`.
            (B::Add, Ty::Str | Ty::Id, Ty::Str | Ty::Id) => Some(Ty::Str),
            (B::Sub, Ty::Time, Ty::Time) => Some(Ty::Duration),
            (B::Add | B::Sub, Ty::Time, Ty::Duration) | (B::Add, Ty::Duration, Ty::Time) => Some(Ty::Time),
            (B::Add | B::Sub, Ty::Duration, Ty::Duration) => Some(Ty::Duration),
            (B::Mul, Ty::Duration, Ty::Int) | (B::Mul, Ty::Int, Ty::Duration) => Some(Ty::Duration),
            _ => None,
        };
        if let Some(ty) = found {
            return ty;
        }
        let timed = |t: &Ty| matches!(t, Ty::Time | Ty::Duration);
        if !timed(at) && !timed(bt) {
            // Ints only: name the operand that is not one.
            self.expect(at, &Ty::Int, a);
            self.expect(bt, &Ty::Int, b);
            return Ty::Int;
        }
        let (x, y) = (self.ty_name(at), self.ty_name(bt));
        let help = match (at, bt) {
            (Ty::Time | Ty::Duration, Ty::Int) | (Ty::Int, Ty::Time | Ty::Duration) => {
                "an int has no unit: write the length of time with one, e.g. `hours(72)`, `days(7)`, `seconds(30)`"
            }
            (Ty::Str, _) | (_, Ty::Str) => "read the string as an instant first: `timestamp(s)`",
            _ => "instants subtract to a duration (`t2 - t1`); a duration is added to an instant or another duration",
        };
        self.lw
            .error(
                "type-mismatch",
                self.loc(e.span),
                format!(
                    "`{}` {} `{x}` and `{y}`",
                    print::expr(e),
                    match op {
                        B::Add => "adds",
                        B::Sub => "subtracts",
                        _ => "multiplies",
                    }
                ),
            )
            .help = Some(help.into());
        Ty::Error
    }

    fn ordered(&self, ty: &Ty) -> bool {
        match ty {
            Ty::Int | Ty::Time | Ty::Duration | Ty::Error => true,
            Ty::Enum(e) => self.lw.policy.enums[*e as usize].order != EnumOrder::None,
            _ => false,
        }
    }

    fn comparable(&mut self, a: &Ty, b: &Ty, e: &ast::Expr) {
        if compatible(a, b) {
            return;
        }
        match (a, b) {
            (Ty::Enum(_), Ty::Enum(_)) => {
                let (x, y) = (self.ty_name(a), self.ty_name(b));
                self.lw
                    .error(
                        "enum-mismatch",
                        self.loc(e.span),
                        format!("comparison between different enumerations `{x}` and `{y}`"),
                    )
                    .help = Some("values of two enumerations are never equal; compare like with like".into());
            }
            _ => {
                let (x, y) = (self.ty_name(a), self.ty_name(b));
                let d = self.lw.error(
                    "type-mismatch",
                    self.loc(e.span),
                    format!("`{}` compares `{x}` with `{y}`", print::expr(e)),
                );
                d.help = match (a, b) {
                    (Ty::Duration, Ty::Int) | (Ty::Int, Ty::Duration) => Some(
                        "an int has no unit: write the length of time with one, e.g. `hours(72)`, `days(7)`, `seconds(30)`"
                            .into(),
                    ),
                    (Ty::Time, Ty::Str) | (Ty::Str, Ty::Time) => {
                        Some("read the string as an instant first: `timestamp(s)`".into())
                    }
                    _ => None,
                };
            }
        }
    }

    fn call(&mut self, name: &ast::Name, args: &[ast::Expr], e: &ast::Expr) -> (ExprKind, Ty) {
        let arity = |lw: &mut Lowerer, n: usize, loc: Loc| {
            if args.len() != n {
                lw.error(
                    "arity",
                    loc,
                    format!(
                        "`{}` takes {n} argument{}, found {}",
                        name.text,
                        if n == 1 { "" } else { "s" },
                        args.len()
                    ),
                );
                false
            } else {
                true
            }
        };
        let loc = self.loc(e.span);
        let unknown = (ExprKind::Lit(Val::unknown()), Ty::Error);
        match name.text.as_str() {
            "valid" => {
                if !arity(self.lw, 1, loc) {
                    return unknown;
                }
                let (x, _) = self.boxed(&args[0]);
                (ExprKind::Valid(x), Ty::Bool)
            }
            "present" | "absent" => {
                if !arity(self.lw, 1, loc) {
                    return unknown;
                }
                let (x, _) = self.boxed(&args[0]);
                let present = ExprKind::Present(x);
                if name.text == "present" {
                    (present, Ty::Bool)
                } else {
                    (
                        ExprKind::Not(Box::new(Expr {
                            kind: present,
                            text: format!("present({})", print::expr(&args[0])).into(),
                        })),
                        Ty::Bool,
                    )
                }
            }
            "count" | "pairs" => {
                if !arity(self.lw, 1, loc) {
                    return unknown;
                }
                let (x, t) = self.boxed(&args[0]);
                let elem = match &t {
                    Ty::List(el) => Some((**el).clone()),
                    Ty::Map(..) | Ty::Domain(_) | Ty::Error if name.text == "count" => None,
                    _ => {
                        let t = self.ty_name(&t);
                        self.mismatch(args[0].span, format!("`{}` needs a list, not `{t}`", name.text));
                        return unknown;
                    }
                };
                if let Some(el) = &elem
                    && !self.lw.has_identity(el)
                {
                    let t = self.ty_name(el);
                    self.lw
                        .error(
                            "count-identity",
                            loc,
                            format!("`{}` counts distinct identities, and `{t}` declares none", name.text),
                        )
                        .help = Some(format!(
                        "declare `identity FIELD` on `{t}`, or count by a key: `count(x in {} by x.FIELD)`",
                        print::expr(&args[0])
                    ));
                }
                if name.text == "count" {
                    (ExprKind::Count(x), Ty::Int)
                } else {
                    (ExprKind::Pairs(x), Ty::Pairs(Box::new(elem.unwrap_or(Ty::Error))))
                }
            }
            "empty" => {
                if !arity(self.lw, 1, loc) {
                    return unknown;
                }
                let (x, t) = self.boxed(&args[0]);
                if !matches!(t, Ty::List(_) | Ty::Map(..) | Ty::Error) {
                    let t = self.ty_name(&t);
                    self.mismatch(args[0].span, format!("`empty` needs a list or a map, not `{t}`"));
                }
                (ExprKind::Empty(x), Ty::Bool)
            }
            "sum" | "max" | "min" if args.len() == 1 || name.text == "sum" => {
                if !arity(self.lw, 1, loc) {
                    return unknown;
                }
                let (x, t) = self.boxed(&args[0]);
                let elem = match &t {
                    Ty::List(el) => (**el).clone(),
                    Ty::Error => Ty::Error,
                    other => {
                        let t = self.ty_name(other);
                        self.mismatch(args[0].span, format!("`{}` of one argument needs a list, not `{t}`", name.text));
                        return unknown;
                    }
                };
                let fine = match (name.text.as_str(), &elem) {
                    (_, Ty::Int | Ty::Duration | Ty::Error) => true,
                    ("sum", _) => false,
                    _ => self.ordered(&elem),
                };
                if !fine {
                    let t = self.ty_name(&elem);
                    let d = self.lw.error(
                        "type-mismatch",
                        self.loc(args[0].span),
                        format!("`{}` needs a list of ints or durations, not of `{t}`", name.text),
                    );
                    d.help = Some(format!(
                        "make a list of numbers from it: `{}([x.FIELD for x in {}])`",
                        name.text,
                        print::expr(&args[0])
                    ));
                    return unknown;
                }
                let op = match name.text.as_str() {
                    "sum" => FoldOp::Sum,
                    "min" => FoldOp::Min,
                    _ => FoldOp::Max,
                };
                let durations = elem == Ty::Duration;
                (ExprKind::Fold { op, list: x, durations }, elem)
            }
            "max" | "min" => {
                if !arity(self.lw, 2, loc) {
                    return unknown;
                }
                let (x, at, y, bt) = self.pair(&args[0], &args[1]);
                self.comparable(&at, &bt, e);
                if !self.ordered(&at) {
                    let t = self.ty_name(&at);
                    self.mismatch(e.span, format!("`{}` needs an int or an ordered enumeration, not `{t}`", name.text));
                }
                let (x, y) = (Box::new(x), Box::new(y));
                (if name.text == "max" { ExprKind::Max(x, y) } else { ExprKind::Min(x, y) }, at)
            }
            "now" => {
                if !arity(self.lw, 0, loc) {
                    return unknown;
                }
                self.lw.policy.reads_now = true;
                (ExprKind::Now, Ty::Time)
            }
            "param" => {
                if !arity(self.lw, 1, loc) {
                    return unknown;
                }
                let ast::ExprKind::Lit(ast::Literal::Str(param, _)) = &args[0].kind else {
                    self.lw.error(
                        "type-mismatch",
                        self.loc(args[0].span),
                        "the name of `param` is written as a string literal, e.g. `\"egress-hosts\"`",
                    );
                    return unknown;
                };
                (ExprKind::Param(param.clone()), Ty::List(Box::new(Ty::Str)))
            }
            "days" | "hours" | "minutes" | "seconds" => {
                if !arity(self.lw, 1, loc) {
                    return unknown;
                }
                let (x, t) = self.boxed(&args[0]);
                self.expect(&t, &Ty::Int, &args[0]);
                let unit: i64 = match name.text.as_str() {
                    "days" => 86_400,
                    "hours" => 3_600,
                    "minutes" => 60,
                    _ => 1,
                };
                (ExprKind::DurationOf(unit * 1_000_000_000, x), Ty::Duration)
            }
            "lower" | "int" | "timestamp" | "trim" => {
                if !arity(self.lw, 1, loc) {
                    return unknown;
                }
                let (x, t) = self.boxed(&args[0]);
                self.expect(&t, &Ty::Str, &args[0]);
                match name.text.as_str() {
                    "lower" => (ExprKind::Lower(x), Ty::Str),
                    "int" => (ExprKind::ParseInt(x), Ty::Int),
                    "trim" => (ExprKind::Trim(x), Ty::Str),
                    _ => (ExprKind::Timestamp(x), Ty::Time),
                }
            }
            n if Builtin::by_name(n).is_some() => {
                let Some((builtin, n)) = Builtin::by_name(n) else { return unknown };
                if !arity(self.lw, n, loc) {
                    return unknown;
                }
                let lowered: Vec<(Expr, Ty)> = args.iter().map(|a| self.expr(a)).collect();
                if builtin == Builtin::Flatten {
                    let ty = match &lowered[0].1 {
                        Ty::List(inner) if matches!(**inner, Ty::List(_) | Ty::Error) => (**inner).clone(),
                        Ty::Error => Ty::Error,
                        other => {
                            let t = self.ty_name(other);
                            self.mismatch(args[0].span, format!("`flatten` needs a list of lists, not `{t}`"));
                            return unknown;
                        }
                    };
                    return (ExprKind::Builtin(builtin, lowered.into_iter().map(|(e, _)| e).collect()), ty);
                }
                if builtin == Builtin::Choose {
                    self.expect(&lowered[0].1, &Ty::Bool, &args[0]);
                    let (then, otherwise) = (&lowered[1].1, &lowered[2].1);
                    self.comparable(then, otherwise, &args[2]);
                    let ty = if *then == Ty::Error { otherwise.clone() } else { then.clone() };
                    return (ExprKind::Builtin(builtin, lowered.into_iter().map(|(e, _)| e).collect()), ty);
                }
                if builtin == Builtin::Join && !matches!(lowered[0].1, Ty::List(_) | Ty::Error) {
                    let t = self.ty_name(&lowered[0].1);
                    self.mismatch(args[0].span, format!("`join` needs a list, not `{t}`"));
                    return unknown;
                }
                if builtin == Builtin::Join {
                    self.expect(&lowered[1].1, &Ty::Str, &args[1]);
                }
                if !matches!(builtin, Builtin::IsNull | Builtin::Show | Builtin::Join) {
                    for (i, ((_, t), a)) in lowered.iter().zip(args).enumerate() {
                        // `replace_line`'s second argument is a line's index.
                        let want = if builtin == Builtin::ReplaceLine && i == 1 { Ty::Int } else { Ty::Str };
                        self.expect(t, &want, a);
                    }
                }
                // An address, a network, a host name or a path written in the policy is checked when it compiles.
                for (i, a) in args.iter().enumerate() {
                    if let ast::ExprKind::Lit(ast::Literal::Str(text, span)) = &a.kind
                        && let Some((code, why)) = literal_refused(builtin, i, text)
                    {
                        self.lw.error(code, self.loc(*span), why);
                    }
                }
                // A pattern written in the policy is checked when the policy compiles.
                if builtin == Builtin::MatchesGlob
                    && let ast::ExprKind::Lit(ast::Literal::Str(p, span)) = &args[1].kind
                    && let Err(e) = crate::eval::glob(p)
                {
                    self.lw.error("bad-glob", self.loc(*span), format!("`{p}` is not a glob: {e}"));
                }
                (ExprKind::Builtin(builtin, lowered.into_iter().map(|(e, _)| e).collect()), builtin.result())
            }
            n if crate::url::UrlPart::by_name(n).is_some() => {
                if !arity(self.lw, 1, loc) {
                    return unknown;
                }
                let (x, t) = self.boxed(&args[0]);
                self.expect(&t, &Ty::Str, &args[0]);
                let part = crate::url::UrlPart::by_name(n).unwrap_or(crate::url::UrlPart::Whole);
                (ExprKind::Url(part, x), Ty::Str)
            }
            "split" | "trim_suffix" => {
                if !arity(self.lw, 2, loc) {
                    return unknown;
                }
                let (x, t) = self.boxed(&args[0]);
                let (y, u) = self.boxed(&args[1]);
                self.expect(&t, &Ty::Str, &args[0]);
                self.expect(&u, &Ty::Str, &args[1]);
                if name.text == "split" {
                    (ExprKind::Split(x, y), Ty::List(Box::new(Ty::Str)))
                } else {
                    (ExprKind::TrimSuffix(x, y), Ty::Str)
                }
            }
            "matches" => {
                if !arity(self.lw, 2, loc) {
                    return unknown;
                }
                let (x, t) = self.boxed(&args[0]);
                self.expect(&t, &Ty::Str, &args[0]);
                let ast::ExprKind::Lit(ast::Literal::Str(source, span)) = &args[1].kind else {
                    self.mismatch(args[1].span, "`matches` takes its pattern as a string literal".into());
                    return unknown;
                };
                match regex::Regex::new(source) {
                    Ok(re) => (ExprKind::Matches(x, Regex::compiled(re)), Ty::Bool),
                    Err(e) => {
                        let message = e.to_string().lines().last().unwrap_or("").trim().to_string();
                        self.lw.error(
                            "bad-regex",
                            self.loc(*span),
                            format!("`{source}` is not a regular expression: {}", message.to_lowercase()),
                        );
                        unknown
                    }
                }
            }
            "bound_to" => {
                if !arity(self.lw, 2, loc) {
                    return unknown;
                }
                let (x, _) = self.boxed(&args[0]);
                let ast::ExprKind::Lit(ast::Literal::Str(layer, _)) = &args[1].kind else {
                    self.lw.error(
                        "type-mismatch",
                        self.loc(args[1].span),
                        "the layer of `bound_to` is written as a string literal, e.g. `\"security\"`",
                    );
                    return unknown;
                };
                let names: Vec<String> = self.lw.policy.layers.iter().flat_map(|l| l.layers.iter().cloned()).collect();
                if !names.contains(layer) {
                    let names: Vec<&str> = names.iter().map(String::as_str).collect();
                    self.lw.unknown_name(self.loc(args[1].span), "layer", layer, &names);
                    return unknown;
                }
                (ExprKind::BoundTo(x, layer.clone()), Ty::Bool)
            }
            "reason" => {
                if !arity(self.lw, 1, loc) {
                    return unknown;
                }
                let (x, _) = self.boxed(&args[0]);
                (ExprKind::Reason(x), Ty::Str)
            }
            "distinct" | "entries" => {
                if !arity(self.lw, 1, loc) {
                    return unknown;
                }
                let (x, t) = self.boxed(&args[0]);
                let Ty::List(elem) = &t else {
                    if t != Ty::Error {
                        let t = self.ty_name(&t);
                        self.mismatch(args[0].span, format!("`{}` needs a list, not `{t}`", name.text));
                    }
                    return unknown;
                };
                if name.text == "entries" {
                    return (ExprKind::Entries(x), Ty::Int);
                }
                if !self.lw.has_identity(elem) {
                    let t = self.ty_name(elem);
                    self.lw
                        .error(
                            "count-identity",
                            loc,
                            format!("`distinct` keeps one entry per identity, and `{t}` declares none"),
                        )
                        .help = Some(format!("declare `identity FIELD` on `{t}`"));
                }
                (ExprKind::Distinct(x), t.clone())
            }
            "holds" | "failure" => {
                if !arity(self.lw, 2, loc) {
                    return unknown;
                }
                let (ast::ExprKind::List(items) | ast::ExprKind::Set(items)) = &args[0].kind else {
                    self.mismatch(
                        args[0].span,
                        format!("`{}` takes a list of rule ids in quotes, e.g. `[\"probe.*\"]`", name.text),
                    );
                    return unknown;
                };
                let mut patterns = Vec::new();
                for item in items {
                    let ast::ExprKind::Lit(ast::Literal::Str(p, span)) = &item.kind else {
                        self.mismatch(item.span, "a rule id in quotes, or a prefix such as `\"probe.*\"`".into());
                        continue;
                    };
                    let known: Vec<String> = self.lw.rule_ids.keys().cloned().collect();
                    if !known.iter().any(|id| rule_matches(p, id)) {
                        let names: Vec<&str> = known.iter().map(String::as_str).collect();
                        self.lw.unknown_name(self.loc(*span), "rule", p, &names);
                    }
                    patterns.push(p.clone());
                }
                let (x, _) = self.boxed(&args[1]);
                self.after.extend(patterns.iter().cloned());
                match name.text.as_str() {
                    "holds" => (ExprKind::Holds(patterns, x), Ty::Bool),
                    _ => (ExprKind::Failure(patterns, x), Ty::Str),
                }
            }
            _ => self.expand(name, args, loc),
        }
    }

    /// Expands a call of a declared function: its arguments bound to fresh
    /// slots, its body lowered in a scope of its own.
    fn expand(&mut self, name: &ast::Name, args: &[ast::Expr], loc: Loc) -> (ExprKind, Ty) {
        let unknown = (ExprKind::Lit(Val::unknown()), Ty::Error);
        let Some((Global::Fn(file, index), _)) = self.lw.globals.get(&name.text).copied() else {
            let mut candidates: Vec<String> = crate::builtins::FUNCTIONS.iter().map(|f| f.name.to_string()).collect();
            candidates.extend(
                self.lw.globals.iter().filter(|(_, (g, _))| matches!(g, Global::Fn(..))).map(|(n, _)| n.clone()),
            );
            let candidates: Vec<&str> = candidates.iter().map(String::as_str).collect();
            self.lw.unknown_name(loc, "function", &name.text, &candidates);
            return unknown;
        };
        let files = self.files;
        let ast::Item::Fn(f) = &files[file as usize].items[index] else { return unknown };
        if self.expanding.contains(&f.name.text) {
            self.lw.error("recursion", loc, format!("function `{}` calls itself", f.name.text)).help =
                Some("grail is total: functions may not recurse, directly or through others".into());
            return unknown;
        }
        self.expansions += 1;
        if self.expansions > MAX_EXPANSIONS || self.expanding.len() >= MAX_EXPANSION_DEPTH {
            if std::mem::replace(&mut self.reported_expansions, true) {
                return unknown;
            }
            let d = self.lw.error(
                "expansion-limit",
                loc,
                format!(
                    "calling `{}` here expands this rule past {} function calls or {} nested calls",
                    f.name.text, MAX_EXPANSIONS, MAX_EXPANSION_DEPTH
                ),
            );
            d.help = Some("functions are expanded where they are called; call fewer functions inside functions".into());
            return unknown;
        }
        if args.len() != f.params.len() {
            self.lw.error(
                "arity",
                loc,
                format!("`{}` takes {} arguments, found {}", f.name.text, f.params.len(), args.len()),
            );
            return unknown;
        }
        let lowered: Vec<(Expr, Ty)> = args.iter().map(|a| self.expr(a)).collect();
        // The body sees only its parameters and the globals.
        let outer = std::mem::take(&mut self.scope);
        let mut slots = Vec::new();
        for (param, (_, ty)) in f.params.iter().zip(&lowered) {
            let slot = self.fresh();
            self.scope.push((param.text.clone(), slot, ty.clone()));
            slots.push(slot);
        }
        self.expanding.push(f.name.text.clone());
        let outer_file = std::mem::replace(&mut self.file, file);
        let after = self.after.len();
        let (mut body, ty) = self.expr(&f.body);
        // A body that reads the findings of other rules (`holds`, `failure`)
        // can differ from rule to rule: never memoised.
        if let Some(&slot) = slots.first()
            && self.after.len() == after
        {
            self.calls.push(CallHead { slot, func: (file, index as u32), args: slots.len() as u32 });
        }
        self.file = outer_file;
        self.expanding.pop();
        self.scope = outer;
        for (slot, (value, _)) in slots.into_iter().zip(lowered).rev() {
            let text = body.text.clone();
            body = Expr { kind: ExprKind::Let { slot, value: Box::new(value), body: Box::new(body) }, text };
        }
        (body.kind, ty)
    }
}

fn compatible(a: &Ty, b: &Ty) -> bool {
    match (a, b) {
        (Ty::Error, _) | (_, Ty::Error) => true,
        (Ty::List(x), Ty::List(y)) => compatible(x, y),
        (Ty::Map(k, v), Ty::Map(l, w)) => compatible(k, l) && compatible(v, w),
        _ => a == b,
    }
}

fn is_string_literal(e: &ast::Expr) -> bool {
    match &e.kind {
        ast::ExprKind::Lit(ast::Literal::Str(..)) => true,
        ast::ExprKind::List(items) | ast::ExprKind::Set(items) => {
            items.iter().all(is_string_literal) && !items.is_empty()
        }
        _ => false,
    }
}

/// `binding.a.b` as the path `a.b`, for subject names.
fn doc_path(e: &ast::Expr, binders: &HashMap<String, DocKindId>) -> Option<String> {
    match &e.kind {
        ast::ExprKind::Field(base, name) => match &base.kind {
            ast::ExprKind::Name(n) if binders.contains_key(&n.text) => Some(name.text.clone()),
            _ => doc_path(base, binders).map(|p| format!("{p}.{}", name.text)),
        },
        _ => None,
    }
}

/// `1 cell`, `2 cells`.
fn plural(n: usize, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

/// Why the string literal `text`, argument `i` of a call of `b`, can never
/// be what the built-in reads (its error code and message), so that a
/// policy's own addresses, networks, host names and paths are checked when
/// it compiles, never found absent when it runs.
fn literal_refused(b: Builtin, i: usize, text: &str) -> Option<(&'static str, String)> {
    match b {
        Builtin::Net if crate::net::parse_net(text).is_none() => {
            Some(("bad-network", format!("`{text}` is not a network: {}", crate::net::net_error(text))))
        }
        Builtin::Ip if crate::net::parse_ip(text).is_none() => Some((
            "bad-address",
            format!("`{text}` is not an IP address (a dotted-quad IPv4 address or an IPv6 address)"),
        )),
        Builtin::Hostname | Builtin::Tld | Builtin::InDomain if crate::net::hostname(text).is_none() => {
            Some(("bad-hostname", format!("`{text}` is not a host name")))
        }
        Builtin::NormalizePath | Builtin::PathParts | Builtin::PathUnder if crate::paths::parse(text).is_none() => {
            Some(("bad-path", format!("`{text}` is not a path")))
        }
        Builtin::TimestampMillis if i == 0 && crate::time::rfc3339_millis(text).is_none() => {
            Some(("bad-timestamp", format!("`{text}` is not an RFC 3339 date-time with at most three fraction digits")))
        }
        _ => None,
    }
}

/// Whether the strings a field's type holds are `text` (not empty): the
/// innermost named type of a list or a map's values.
fn names_text(t: &ast::TypeExpr) -> bool {
    match t {
        ast::TypeExpr::Named(n) => n.text == "text",
        ast::TypeExpr::List(e, _) | ast::TypeExpr::Map(_, e, _) => names_text(e),
        _ => false,
    }
}
