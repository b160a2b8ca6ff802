//! The symbol index of a policy: every declaration and every use of a name,
//! resolved with the types of the lowered policy.
//!
//! Lowering resolves names too, but keeps no table of where each name points:
//! the lowered policy is what evaluation needs, and a side table would make
//! every edit of a span invalidate it. The index is built beside it, from the
//! syntax trees, with the record, matrix and enumeration types read from the
//! lowered [`Policy`]. Functions are walked where they are called, with the
//! types of their arguments, as lowering expands them.

use std::collections::{BTreeSet, HashMap, HashSet};

use grail_lang::ast::{self, Span};

use crate::db::{PolicySet, compile_policy, parse_policy};
use crate::hir::{EnumId, Loc, MatrixId, Policy, RecordId, Ty};

/// Something a policy declares, by name.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Symbol {
    Enum(String),
    Variant {
        enumeration: String,
        variant: String,
    },
    /// A record, or a document kind (whose top-level keys are a record of the same name).
    Record(String),
    Field {
        record: String,
        field: String,
    },
    Matrix(String),
    Column {
        matrix: String,
        column: String,
    },
    Function(String),
    /// A rule id: a rule, or the id a structural check or a bound reports under.
    Rule(String),
    /// A variable (`for`, `let`, a quantifier, a parameter), by where its name is declared.
    Local(Loc),
}

/// A declaration: where its name is, the whole item or member it belongs to,
/// its documentation, and for variables the type when it is known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decl {
    pub symbol: Symbol,
    pub loc: Loc,
    pub item: Loc,
    pub docs: Vec<String>,
    pub ty: Option<Ty>,
}

/// A use of a name: where it is, what it denotes, and the item it is in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Use {
    pub loc: Loc,
    pub symbol: Symbol,
    pub owner: Option<Symbol>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PolicyIndex {
    pub decls: Vec<Decl>,
    pub uses: Vec<Use>,
    /// `(caller, callee)`: a rule or a function calls a function.
    pub calls: Vec<(Symbol, String)>,
}

fn contains(span: Span, offset: usize) -> bool {
    span.start <= offset && offset <= span.end
}

impl PolicyIndex {
    pub fn decl(&self, symbol: &Symbol) -> Option<&Decl> {
        self.decls.iter().find(|d| &d.symbol == symbol)
    }

    /// The symbol whose name is at `offset` of policy file `file`, and the span of that name.
    pub fn at(&self, file: u32, offset: usize) -> Option<(&Symbol, Span)> {
        let decls = self.decls.iter().map(|d| (&d.symbol, d.loc));
        let uses = self.uses.iter().map(|u| (&u.symbol, u.loc));
        decls
            .chain(uses)
            .filter(|(_, loc)| loc.file == file && contains(loc.span, offset))
            .min_by_key(|(_, loc)| loc.span.len())
            .map(|(s, loc)| (s, loc.span))
    }

    /// Every use of a symbol, in source order.
    pub fn uses_of(&self, symbol: &Symbol) -> Vec<Loc> {
        let mut locs: Vec<Loc> = self.uses.iter().filter(|u| &u.symbol == symbol).map(|u| u.loc).collect();
        locs.sort_by_key(|l| (l.file, l.span.start));
        locs.dedup();
        locs
    }

    /// The rules that read a symbol, directly or through the functions they call.
    pub fn rules_reading(&self, symbol: &Symbol) -> Vec<String> {
        let direct: HashSet<&Symbol> =
            self.uses.iter().filter(|u| &u.symbol == symbol).filter_map(|u| u.owner.as_ref()).collect();
        let mut functions: BTreeSet<String> = direct
            .iter()
            .filter_map(|s| match s {
                Symbol::Function(f) => Some(f.clone()),
                _ => None,
            })
            .collect();
        loop {
            let before = functions.len();
            for (caller, callee) in &self.calls {
                if let Symbol::Function(f) = caller
                    && functions.contains(callee)
                {
                    functions.insert(f.clone());
                }
            }
            if functions.len() == before {
                break;
            }
        }
        let mut rules: BTreeSet<String> = direct
            .iter()
            .filter_map(|s| match s {
                Symbol::Rule(r) => Some(r.clone()),
                _ => None,
            })
            .collect();
        for (caller, callee) in &self.calls {
            if let Symbol::Rule(r) = caller
                && functions.contains(callee)
            {
                rules.insert(r.clone());
            }
        }
        rules.into_iter().collect()
    }
}

/// The index of a policy; recomputed only when a policy file changes.
#[salsa::tracked(returns(ref))]
pub fn policy_index(db: &dyn salsa::Database, set: PolicySet) -> PolicyIndex {
    let files: Vec<&ast::SourceFile> = set.files(db).iter().map(|f| &parse_policy(db, *f).file).collect();
    let compiled = compile_policy(db, set);
    build(&files, &compiled.policy)
}

/// Builds the index of parsed files over their lowered policy.
pub fn build(files: &[&ast::SourceFile], policy: &Policy) -> PolicyIndex {
    let mut r = Resolver {
        policy,
        files,
        file: 0,
        owner: None,
        decls: Vec::new(),
        locals: HashMap::new(),
        uses: HashMap::new(),
        calls: Vec::new(),
        binders: HashMap::new(),
        all_binders: HashMap::new(),
        functions: HashMap::new(),
        expanding: Vec::new(),
        witnesses: None,
        unresolved: Vec::new(),
    };
    r.declare();
    r.walk_rules();
    r.walk_functions();
    r.resolve_by_name();
    let mut uses: Vec<Use> = r.uses.into_iter().map(|(loc, (symbol, owner))| Use { loc, symbol, owner }).collect();
    uses.sort_by_key(|u| (u.loc.file, u.loc.span.start, u.loc.span.end));
    PolicyIndex { decls: r.decls, uses, calls: r.calls }
}

/// A variable in scope: its name, where it is declared, its type.
type Scope = Vec<(String, Loc, Ty)>;

struct Resolver<'a> {
    policy: &'a Policy,
    files: &'a [&'a ast::SourceFile],
    file: u32,
    owner: Option<Symbol>,
    decls: Vec<Decl>,
    /// Index into `decls` of each variable, to record its type once known.
    locals: HashMap<Loc, usize>,
    /// The first resolution of each use wins: a function body walked at a
    /// call site knows its parameters' types; walked on its own it does not.
    uses: HashMap<Loc, (Symbol, Option<Symbol>)>,
    calls: Vec<(Symbol, String)>,
    /// Document binders (`pipeline`) to their document's name.
    binders: HashMap<String, String>,
    /// Binders of every document of a kind (a list) to the document's name.
    all_binders: HashMap<String, String>,
    functions: HashMap<String, (u32, usize)>,
    expanding: Vec<String>,
    /// While walking a `require`: the variables of quantifiers, which its message may name.
    witnesses: Option<Scope>,
    /// Field names whose owner's type is unknown: resolved by name at the end.
    unresolved: Vec<(Loc, String, Option<Symbol>)>,
}

impl<'a> Resolver<'a> {
    fn loc(&self, span: Span) -> Loc {
        Loc { file: self.file, span }
    }

    fn declare_symbol(&mut self, symbol: Symbol, name: Span, item: Span, docs: &[String]) {
        let (loc, item) = (self.loc(name), self.loc(item));
        self.decls.push(Decl { symbol, loc, item, docs: docs.to_vec(), ty: None });
    }

    fn use_symbol(&mut self, span: Span, symbol: Symbol) {
        let owner = self.owner.clone();
        self.uses.entry(self.loc(span)).or_insert((symbol, owner));
    }

    fn enum_id(&self, name: &str) -> Option<EnumId> {
        self.policy.enums.iter().position(|e| e.name == name).map(|i| i as EnumId)
    }

    fn record_id(&self, name: &str) -> Option<RecordId> {
        self.policy.records.iter().position(|r| r.name == name).map(|i| i as RecordId)
    }

    fn matrix_id(&self, name: &str) -> Option<MatrixId> {
        self.policy.matrices.iter().position(|m| m.name == name).map(|i| i as MatrixId)
    }

    // ------------------------------------------------------------ declarations

    fn declare(&mut self) {
        let files = self.files;
        for (f, file) in files.iter().enumerate() {
            self.file = f as u32;
            for item in &file.items {
                match item {
                    ast::Item::Enum(e) => {
                        self.declare_symbol(Symbol::Enum(e.name.text.clone()), e.name.span, e.span, &e.docs);
                        for v in &e.variants {
                            let symbol = Symbol::Variant { enumeration: e.name.text.clone(), variant: v.text.clone() };
                            self.declare_symbol(symbol, v.span, e.span, &[]);
                        }
                    }
                    ast::Item::Record(r) => {
                        self.owner = Some(Symbol::Record(r.name.text.clone()));
                        self.declare_symbol(Symbol::Record(r.name.text.clone()), r.name.span, r.span, &r.docs);
                        if let Some(id) = &r.identity {
                            let field = Symbol::Field { record: r.name.text.clone(), field: id.text.clone() };
                            self.use_symbol(id.span, field);
                        }
                        self.checks(&r.checks);
                        self.fields(&r.name.text, &r.fields);
                    }
                    ast::Item::Document(d) => {
                        self.owner = Some(Symbol::Record(d.name.text.clone()));
                        self.declare_symbol(Symbol::Record(d.name.text.clone()), d.name.span, d.span, &d.docs);
                        self.binders.insert(d.binder.text.clone(), d.name.text.clone());
                        self.use_symbol(d.binder.span, Symbol::Record(d.name.text.clone()));
                        if let Some(all) = &d.all_binder {
                            self.all_binders.insert(all.text.clone(), d.name.text.clone());
                            self.use_symbol(all.span, Symbol::Record(d.name.text.clone()));
                        }
                        if let ast::Selector::Markdown { rule, .. } = &d.selector {
                            self.declare_symbol(Symbol::Rule(rule.text.clone()), rule.span, d.span, &[]);
                        }
                        self.checks(&d.checks);
                        for forbid in &d.forbids {
                            self.declare_symbol(
                                Symbol::Rule(forbid.rule.text.clone()),
                                forbid.rule.span,
                                forbid.span,
                                &[],
                            );
                        }
                        self.fields(&d.name.text, &d.fields);
                    }
                    ast::Item::Matrix(m) => {
                        self.owner = Some(Symbol::Matrix(m.name.text.clone()));
                        self.matrix(m);
                    }
                    ast::Item::Fn(function) => {
                        self.declare_symbol(
                            Symbol::Function(function.name.text.clone()),
                            function.name.span,
                            function.span,
                            &function.docs,
                        );
                        for p in &function.params {
                            self.declare_local(p, None);
                        }
                    }
                    ast::Item::Rule(rule) => {
                        self.declare_symbol(Symbol::Rule(rule.id.text.clone()), rule.id.span, rule.span, &rule.docs);
                    }
                    ast::Item::Question(q) => {
                        self.declare_symbol(Symbol::Rule(q.id.text.clone()), q.id.span, q.span, &q.docs);
                    }
                    ast::Item::Table(t) => {
                        self.declare_symbol(Symbol::Rule(t.id.text.clone()), t.id.span, t.span, &t.docs);
                    }
                    ast::Item::Layers(l) => {
                        let document = l.document.text.clone();
                        self.owner = Some(Symbol::Record(document.clone()));
                        self.use_symbol(l.document.span, Symbol::Record(document.clone()));
                        let fields = l.claim.iter().chain(l.only.iter().flat_map(|(_, f)| f)).chain(&l.free);
                        for f in fields {
                            let symbol = Symbol::Field { record: document.clone(), field: f.text.clone() };
                            self.use_symbol(f.span, symbol);
                        }
                        self.checks(&l.checks);
                    }
                }
                self.owner = None;
            }
            for (i, item) in file.items.iter().enumerate() {
                if let ast::Item::Fn(function) = item {
                    self.functions.insert(function.name.text.clone(), (f as u32, i));
                }
            }
        }
    }

    fn checks(&mut self, checks: &[ast::CheckRule]) {
        for c in checks.iter().filter(|c| !c.allow) {
            self.declare_symbol(Symbol::Rule(c.rule.text.clone()), c.rule.span, c.span, &[]);
        }
    }

    fn fields(&mut self, record: &str, fields: &[ast::Field]) {
        for field in fields {
            let symbol = Symbol::Field { record: record.to_string(), field: field.name.text.clone() };
            self.declare_symbol(symbol, field.name.span, field.span, &field.docs);
            self.type_expr(&field.ty);
            if let Some(ast::DefaultValue::Column(c)) = &field.default {
                self.column_ref(c);
            }
            for b in &field.bounds {
                self.column_ref(&b.column);
                self.declare_symbol(Symbol::Rule(b.rule.text.clone()), b.rule.span, b.span, &[]);
            }
            if let Some(u) = &field.unique {
                self.declare_symbol(Symbol::Rule(u.text.clone()), u.span, field.span, &[]);
            }
        }
    }

    fn type_name(&mut self, name: &ast::Name) {
        if self.enum_id(&name.text).is_some() {
            self.use_symbol(name.span, Symbol::Enum(name.text.clone()));
        } else if self.record_id(&name.text).is_some() {
            self.use_symbol(name.span, Symbol::Record(name.text.clone()));
        }
    }

    fn type_expr(&mut self, t: &ast::TypeExpr) {
        match t {
            ast::TypeExpr::Named(n) | ast::TypeExpr::Ref(n, _) => self.type_name(n),
            ast::TypeExpr::Int { .. } => {}
            ast::TypeExpr::List(elem, _) => self.type_expr(elem),
            ast::TypeExpr::Map(key, value, _) => {
                self.type_name(key);
                self.type_expr(value);
            }
        }
    }

    fn column_ref(&mut self, c: &ast::ColumnRef) {
        self.use_symbol(c.matrix.span, Symbol::Matrix(c.matrix.text.clone()));
        let column = Symbol::Column { matrix: c.matrix.text.clone(), column: c.column.text.clone() };
        self.use_symbol(c.column.span, column);
    }

    fn matrix(&mut self, m: &ast::MatrixDecl) {
        self.declare_symbol(Symbol::Matrix(m.name.text.clone()), m.name.span, m.span, &m.docs);
        self.type_name(&m.key_enum);
        for c in &m.columns {
            let symbol = Symbol::Column { matrix: m.name.text.clone(), column: c.name.text.clone() };
            self.declare_symbol(symbol, c.name.span, m.span, &[]);
            self.type_name(&c.ty);
        }
        let columns: Vec<Option<String>> =
            m.columns.iter().map(|c| self.enum_id(&c.ty.text).map(|_| c.ty.text.clone())).collect();
        for row in &m.rows {
            let key = Symbol::Variant { enumeration: m.key_enum.text.clone(), variant: row.key.text.clone() };
            self.use_symbol(row.key.span, key);
            for (cell, column) in row.cells.iter().zip(&columns) {
                let (Some(enumeration), text) = (column, literal_text(cell)) else { continue };
                if let Some(variant) = text {
                    let symbol = Symbol::Variant { enumeration: enumeration.clone(), variant };
                    self.use_symbol(cell.span(), symbol);
                }
            }
        }
    }

    fn declare_local(&mut self, name: &ast::Name, ty: Option<Ty>) -> Loc {
        let loc = self.loc(name.span);
        if let Some(&i) = self.locals.get(&loc) {
            if self.decls[i].ty.is_none() {
                self.decls[i].ty = ty.filter(|t| *t != Ty::Error);
            }
            return loc;
        }
        self.locals.insert(loc, self.decls.len());
        self.decls.push(Decl {
            symbol: Symbol::Local(loc),
            loc,
            item: loc,
            docs: Vec::new(),
            ty: ty.filter(|t| *t != Ty::Error),
        });
        loc
    }

    // ------------------------------------------------------------ rules and functions

    fn walk_rules(&mut self) {
        let files = self.files;
        for (f, file) in files.iter().enumerate() {
            for item in &file.items {
                if let ast::Item::Question(q) = item {
                    self.file = f as u32;
                    self.owner = Some(Symbol::Rule(q.id.text.clone()));
                    let mut scope = Scope::new();
                    for var in &q.vars {
                        let ty = self.expr(&var.domain, &mut scope);
                        self.bind(&var.pattern, &ty, &mut scope);
                    }
                    self.expr(&q.allow, &mut scope);
                    self.owner = None;
                    continue;
                }
                if let ast::Item::Table(t) = item {
                    self.file = f as u32;
                    self.owner = Some(Symbol::Rule(t.id.text.clone()));
                    let mut scope = Scope::new();
                    for clause in t.clauses.iter() {
                        self.clause(clause, &mut scope);
                    }
                    for c in std::iter::once(&t.row).chain(&t.columns) {
                        self.expr(&c.value, &mut scope);
                    }
                    if let Some((detail, _)) = &t.detail {
                        self.expr(detail, &mut scope);
                    }
                    self.owner = None;
                    continue;
                }
                let ast::Item::Rule(rule) = item else { continue };
                self.file = f as u32;
                self.owner = Some(Symbol::Rule(rule.id.text.clone()));
                let mut scope = Scope::new();
                for clause in rule.clauses.iter() {
                    self.clause(clause, &mut scope);
                }
                self.owner = None;
            }
        }
    }

    /// The names a clause of a rule or a table resolves and binds.
    fn clause(&mut self, clause: &ast::Clause, scope: &mut Scope) {
        match clause {
            ast::Clause::For { pattern, domain, filter, .. } => {
                let ty = self.expr(domain, scope);
                self.bind(pattern, &ty, scope);
                if let Some(f) = filter {
                    self.expr(f, scope);
                }
            }
            ast::Clause::When { guard, reason, .. } => {
                self.expr(guard, scope);
                if let Some(t) = reason {
                    self.template(t, scope);
                }
            }
            ast::Clause::Let { name, value, .. } => {
                let ty = self.expr(value, scope);
                let loc = self.declare_local(name, Some(ty.clone()));
                scope.push((name.text.clone(), loc, ty));
            }
            ast::Clause::Require { check, message, .. } => {
                self.witnesses = Some(Scope::new());
                self.expr(check, scope);
                let witnesses = self.witnesses.take().unwrap_or_default();
                let depth = scope.len();
                scope.extend(witnesses);
                self.template(message, scope);
                scope.truncate(depth);
            }
            ast::Clause::At { location, .. } => {
                self.expr(location, scope);
            }
        }
    }

    /// Functions never called, or parts of them no call reached, still resolve their globals.
    fn walk_functions(&mut self) {
        let files = self.files;
        for (f, file) in files.iter().enumerate() {
            for item in &file.items {
                let ast::Item::Fn(function) = item else { continue };
                self.file = f as u32;
                self.owner = Some(Symbol::Function(function.name.text.clone()));
                let mut scope: Scope =
                    function.params.iter().map(|p| (p.text.clone(), self.loc(p.span), Ty::Error)).collect();
                self.expr(&function.body, &mut scope);
                self.owner = None;
            }
        }
    }

    /// A field read on a value of unknown type: the field of that name, if only one record has it.
    fn resolve_by_name(&mut self) {
        for (loc, name, owner) in std::mem::take(&mut self.unresolved) {
            if self.uses.contains_key(&loc) {
                continue;
            }
            let mut found: Vec<Symbol> = Vec::new();
            for r in &self.policy.records {
                if r.field(&name).is_some() {
                    found.push(Symbol::Field { record: r.name.clone(), field: name.clone() });
                }
            }
            for m in &self.policy.matrices {
                if m.columns.iter().any(|c| c.name == name) {
                    found.push(Symbol::Column { matrix: m.name.clone(), column: name.clone() });
                }
            }
            if let [only] = found.as_slice() {
                self.uses.insert(loc, (only.clone(), owner));
            }
        }
    }

    fn template(&mut self, t: &ast::Template, scope: &mut Scope) {
        for part in &t.parts {
            if let ast::TemplatePart::Hole(e) = part {
                self.expr(e, scope);
            }
        }
    }

    fn bind(&mut self, pattern: &ast::Pattern, ty: &Ty, scope: &mut Scope) {
        let (first, second) = match (pattern, ty) {
            (ast::Pattern::One(_), Ty::List(t)) => ((**t).clone(), Ty::Error),
            (ast::Pattern::One(_), Ty::Domain(e)) => (Ty::Enum(*e), Ty::Error),
            (ast::Pattern::One(_), Ty::Map(k, _)) => ((**k).clone(), Ty::Error),
            (ast::Pattern::Entry(..), Ty::Map(k, v)) => ((**k).clone(), (**v).clone()),
            (ast::Pattern::Pair(..), Ty::Pairs(t)) => ((**t).clone(), (**t).clone()),
            _ => (Ty::Error, Ty::Error),
        };
        for (name, ty) in pattern.names().into_iter().zip([first, second]) {
            let loc = self.declare_local(name, Some(ty.clone()));
            scope.push((name.text.clone(), loc, ty));
        }
    }

    /// Leaves a quantifier's scope; inside a `require`, its variables stay visible to the message.
    fn unbind(&mut self, scope: &mut Scope, depth: usize) {
        let gone = scope.split_off(depth);
        if self.expanding.is_empty()
            && let Some(w) = &mut self.witnesses
        {
            w.extend(gone);
        }
    }

    /// Resolves the names of an expression; returns its type (`Ty::Error` when unknown).
    fn expr(&mut self, e: &ast::Expr, scope: &mut Scope) -> Ty {
        use ast::ExprKind as A;
        match &e.kind {
            A::Lit(l) => match l {
                ast::Literal::Int(..) => Ty::Int,
                ast::Literal::Bool(..) => Ty::Bool,
                _ => Ty::Str,
            },
            A::Name(n) => self.name(n, scope),
            A::Field(base, name) => {
                let bt = self.expr(base, scope);
                match &bt {
                    Ty::Record(r) => {
                        let Some(rec) = self.policy.records.get(*r as usize) else { return Ty::Error };
                        match rec.field(&name.text) {
                            Some(i) => {
                                let symbol = Symbol::Field { record: rec.name.clone(), field: name.text.clone() };
                                let ty = rec.fields[i].ty.clone();
                                self.use_symbol(name.span, symbol);
                                ty
                            }
                            None => Ty::Error,
                        }
                    }
                    Ty::Row(m) => {
                        let Some(def) = self.policy.matrices.get(*m as usize) else { return Ty::Error };
                        match def.columns.iter().find(|c| c.name == name.text) {
                            Some(c) => {
                                let symbol = Symbol::Column { matrix: def.name.clone(), column: c.name.clone() };
                                let ty = c.ty.clone();
                                self.use_symbol(name.span, symbol);
                                ty
                            }
                            None => Ty::Error,
                        }
                    }
                    _ => {
                        self.unresolved.push((self.loc(name.span), name.text.clone(), self.owner.clone()));
                        Ty::Error
                    }
                }
            }
            A::Index(base, index) => {
                let bt = self.expr(base, scope);
                let it = self.expr(index, scope);
                match bt {
                    Ty::Map(k, v) => {
                        self.variant_literal(index, &k);
                        let _ = it;
                        *v
                    }
                    Ty::List(elem) => *elem,
                    Ty::Matrix(m) => {
                        if let Some(def) = self.policy.matrices.get(m as usize) {
                            self.variant_literal(index, &Ty::Enum(def.key_enum));
                        }
                        Ty::Row(m)
                    }
                    _ => Ty::Error,
                }
            }
            A::Not(inner) => {
                self.expr(inner, scope);
                Ty::Bool
            }
            A::Binary(op, a, b) => {
                let at = self.expr(a, scope);
                let bt = self.expr(b, scope);
                use ast::BinOp as B;
                match op {
                    B::Eq | B::Ne | B::TighterThan | B::LooserThan | B::Lt | B::Le | B::Gt | B::Ge => {
                        self.variant_literal(b, &at);
                        self.variant_literal(a, &bt);
                        Ty::Bool
                    }
                    B::In | B::NotIn => {
                        let elem = match &bt {
                            Ty::List(t) => (**t).clone(),
                            Ty::Map(k, _) => (**k).clone(),
                            Ty::Domain(en) => Ty::Enum(*en),
                            _ => Ty::Error,
                        };
                        self.variant_literal(a, &elem);
                        self.variant_literal(b, &Ty::List(Box::new(at)));
                        Ty::Bool
                    }
                    B::And | B::Or => Ty::Bool,
                    B::Add | B::Sub | B::Mul => Ty::Int,
                    B::Coalesce | B::Concat => {
                        if at == Ty::Error {
                            bt
                        } else {
                            at
                        }
                    }
                }
            }
            A::Call(name, args) => self.call(name, args, scope),
            A::List(items) | A::Set(items) => {
                let mut elem = Ty::Error;
                for item in items {
                    let t = self.expr(item, scope);
                    if elem == Ty::Error {
                        elem = t;
                    }
                }
                Ty::List(Box::new(elem))
            }
            A::Quant { pattern, domain, body, .. } => {
                let dt = self.expr(domain, scope);
                let depth = scope.len();
                self.bind(pattern, &dt, scope);
                self.expr(body, scope);
                self.unbind(scope, depth);
                Ty::Bool
            }
            A::CountBy { var, domain, key } => {
                let dt = self.expr(domain, scope);
                let depth = scope.len();
                self.bind(&ast::Pattern::One(var.clone()), &dt, scope);
                self.expr(key, scope);
                scope.truncate(depth);
                Ty::Int
            }
            A::Comprehension { value, pattern, domain, filter } => {
                let dt = self.expr(domain, scope);
                let depth = scope.len();
                self.bind(pattern, &dt, scope);
                if let Some(f) = filter {
                    self.expr(f, scope);
                }
                let vt = self.expr(value, scope);
                scope.truncate(depth);
                Ty::List(Box::new(vt))
            }
        }
    }

    /// A string literal where a variant of `ty` is expected names that variant.
    fn variant_literal(&mut self, e: &ast::Expr, ty: &Ty) {
        match (&e.kind, ty) {
            (ast::ExprKind::Lit(ast::Literal::Str(s, span)), Ty::Enum(en)) => {
                if let Some(def) = self.policy.enums.get(*en as usize)
                    && def.variants.contains(s)
                {
                    let symbol = Symbol::Variant { enumeration: def.name.clone(), variant: s.clone() };
                    self.use_symbol(*span, symbol);
                }
            }
            (ast::ExprKind::List(items) | ast::ExprKind::Set(items), Ty::List(elem)) => {
                for item in items {
                    self.variant_literal(item, elem);
                }
            }
            _ => {}
        }
    }

    fn name(&mut self, n: &ast::Name, scope: &Scope) -> Ty {
        if let Some((_, loc, ty)) = scope.iter().rev().find(|(s, ..)| *s == n.text) {
            let (loc, ty) = (*loc, ty.clone());
            self.use_symbol(n.span, Symbol::Local(loc));
            return ty;
        }
        if let Some(doc) = self.binders.get(&n.text).cloned() {
            self.use_symbol(n.span, Symbol::Record(doc.clone()));
            return self.record_id(&doc).map_or(Ty::Error, Ty::Record);
        }
        if let Some(doc) = self.all_binders.get(&n.text).cloned() {
            self.use_symbol(n.span, Symbol::Record(doc.clone()));
            return self.record_id(&doc).map_or(Ty::Error, |r| Ty::List(Box::new(Ty::Record(r))));
        }
        if let Some(m) = self.matrix_id(&n.text) {
            self.use_symbol(n.span, Symbol::Matrix(n.text.clone()));
            return Ty::Matrix(m);
        }
        if let Some(e) = self.enum_id(&n.text) {
            self.use_symbol(n.span, Symbol::Enum(n.text.clone()));
            return Ty::Domain(e);
        }
        if self.functions.contains_key(&n.text) {
            self.use_symbol(n.span, Symbol::Function(n.text.clone()));
        } else if self.record_id(&n.text).is_some() {
            self.use_symbol(n.span, Symbol::Record(n.text.clone()));
        }
        Ty::Error
    }

    fn call(&mut self, name: &ast::Name, args: &[ast::Expr], scope: &mut Scope) -> Ty {
        let types: Vec<Ty> = args.iter().map(|a| self.expr(a, scope)).collect();
        let first = types.first().cloned().unwrap_or(Ty::Error);
        match name.text.as_str() {
            "present" | "absent" | "empty" | "matches" | "holds" | "bound_to" => return Ty::Bool,
            "failure" => return Ty::Str,
            "count" | "entries" | "int" => return Ty::Int,
            "sum" | "max" | "min" if args.len() == 1 => {
                return match first {
                    Ty::List(t) => *t,
                    _ => Ty::Error,
                };
            }
            "timestamp" | "now" => return Ty::Time,
            "days" | "hours" | "minutes" | "seconds" => return Ty::Duration,
            "lower" | "trim_suffix" | "reason" => return Ty::Str,
            "split" | "param" => return Ty::List(Box::new(Ty::Str)),
            n if let Some((b, _)) = crate::hir::Builtin::by_name(n)
                && b != crate::hir::Builtin::Flatten =>
            {
                return b.result();
            }
            "max" | "min" | "distinct" => return first,
            "pairs" => {
                return match first {
                    Ty::List(t) => Ty::Pairs(t),
                    _ => Ty::Error,
                };
            }
            _ => {}
        }
        let Some(&(file, index)) = self.functions.get(&name.text) else { return Ty::Error };
        self.use_symbol(name.span, Symbol::Function(name.text.clone()));
        if let Some(owner) = &self.owner {
            let call = (owner.clone(), name.text.clone());
            if !self.calls.contains(&call) {
                self.calls.push(call);
            }
        }
        let files = self.files;
        let Some(ast::Item::Fn(f)) = files.get(file as usize).and_then(|x| x.items.get(index)) else {
            return Ty::Error;
        };
        if self.expanding.contains(&f.name.text) || f.params.len() != args.len() {
            return Ty::Error;
        }
        // Walk the body with the arguments' types, as lowering expands it.
        let outer_file = std::mem::replace(&mut self.file, file);
        let outer_owner = self.owner.replace(Symbol::Function(f.name.text.clone()));
        let mut body_scope = Scope::new();
        for (p, ty) in f.params.iter().zip(types) {
            let loc = self.declare_local(p, Some(ty.clone()));
            body_scope.push((p.text.clone(), loc, ty));
        }
        self.expanding.push(f.name.text.clone());
        let ty = self.expr(&f.body, &mut body_scope);
        self.expanding.pop();
        self.file = outer_file;
        self.owner = outer_owner;
        ty
    }
}

/// The variant a matrix cell names, if it is a name or a string.
fn literal_text(l: &ast::Literal) -> Option<String> {
    match l {
        ast::Literal::Name(n) => Some(n.text.clone()),
        ast::Literal::Str(s, _) => Some(s.clone()),
        _ => None,
    }
}

/// The name of a type, as the language writes it.
pub fn ty_name(policy: &Policy, ty: &Ty) -> String {
    match ty {
        Ty::Bool => "bool".into(),
        Ty::Int => "int".into(),
        Ty::Str => "string".into(),
        Ty::Time => "time".into(),
        Ty::Duration => "duration".into(),
        Ty::Net => "network".into(),
        Ty::Id => "id".into(),
        Ty::Enum(e) => policy.enums.get(*e as usize).map(|d| d.name.clone()).unwrap_or_default(),
        Ty::Record(r) => policy.records.get(*r as usize).map(|d| d.name.clone()).unwrap_or_default(),
        Ty::List(t) => format!("list {}", ty_name(policy, t)),
        Ty::Map(k, v) => format!("map {} -> {}", ty_name(policy, k), ty_name(policy, v)),
        Ty::Matrix(m) => format!("matrix {}", policy.matrices.get(*m as usize).map_or("", |d| d.name.as_str())),
        Ty::Row(m) => format!("row of {}", policy.matrices.get(*m as usize).map_or("", |d| d.name.as_str())),
        Ty::Domain(e) => format!("enumeration {}", ty_name(policy, &Ty::Enum(*e))),
        Ty::Pairs(t) => format!("pairs of {}", ty_name(policy, t)),
        Ty::Error => "?".into(),
    }
}
