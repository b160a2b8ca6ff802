//! The syntax tree. Every node carries the byte span of its source text.
//!
//! The tree is plain data: no resolution, no types. Names are strings with
//! spans; the engine resolves them.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A byte range into one source file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Span {
        Span { start, end }
    }

    /// The smallest span covering both.
    pub fn join(self, other: Span) -> Span {
        Span::new(self.start.min(other.start), self.end.max(other.end))
    }

    pub fn len(self) -> usize {
        self.end.saturating_sub(self.start)
    }

    pub fn is_empty(self) -> bool {
        self.len() == 0
    }
}

/// A name as written, with its span.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Name {
    pub text: String,
    pub span: Span,
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// One parsed file: its items in source order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SourceFile {
    pub items: Vec<Item>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item {
    Enum(EnumDecl),
    Record(RecordDecl),
    Document(DocumentDecl),
    Matrix(MatrixDecl),
    Fn(FnDecl),
    Rule(RuleDecl),
    Layers(LayersDecl),
    Question(QuestionDecl),
    Table(TableDecl),
}

impl Item {
    pub fn span(&self) -> Span {
        match self {
            Item::Enum(d) => d.span,
            Item::Record(d) => d.span,
            Item::Document(d) => d.span,
            Item::Matrix(d) => d.span,
            Item::Fn(d) => d.span,
            Item::Rule(d) => d.span,
            Item::Layers(d) => d.span,
            Item::Question(d) => d.span,
            Item::Table(d) => d.span,
        }
    }

    /// The name the item declares (a rule's identifier for rules).
    pub fn name(&self) -> &Name {
        match self {
            Item::Enum(d) => &d.name,
            Item::Record(d) => &d.name,
            Item::Document(d) => &d.name,
            Item::Matrix(d) => &d.name,
            Item::Fn(d) => &d.name,
            Item::Rule(d) => &d.id,
            Item::Layers(d) => &d.document,
            Item::Question(d) => &d.id,
            Item::Table(d) => &d.id,
        }
    }
}

/// How an enumeration's variants are ordered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum EnumOrder {
    /// No order: only equality.
    None,
    /// Declaration order, comparable with `<` and `max`.
    Ordered,
    /// Declaration order, tightest first: also `tighter_than` / `looser_than`,
    /// and usable as a tighten-only column.
    TightestFirst,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EnumDecl {
    pub docs: Vec<String>,
    pub name: Name,
    pub order: EnumOrder,
    pub variants: Vec<Name>,
    pub span: Span,
}

/// A structural check of documents, and the rule id its findings carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CheckKind {
    Syntax,
    DuplicateKey,
    UnknownKey,
    /// A required key that is missing (reported under `type` when not named).
    MissingKey,
    Type,
    /// A deployment in which no document of the kind was found.
    Empty,
    /// Layers: a lower layer loosens a value.
    Loosen,
    /// Layers: a lower layer sets what only a higher one may.
    Untrusted,
    /// Layers: two documents of one layer.
    Order,
    /// Layers: a document claims another layer than the one it is bound to.
    Claim,
    /// Versions: a new version loosens or removes what the previous one said (`--base`).
    Change,
}

impl CheckKind {
    pub fn keyword(self) -> &'static str {
        match self {
            CheckKind::Syntax => "syntax",
            CheckKind::DuplicateKey => "duplicate_key",
            CheckKind::UnknownKey => "unknown_key",
            CheckKind::MissingKey => "missing_key",
            CheckKind::Type => "type",
            CheckKind::Empty => "empty",
            CheckKind::Loosen => "loosen",
            CheckKind::Untrusted => "untrusted",
            CheckKind::Order => "order",
            CheckKind::Claim => "claim",
            CheckKind::Change => "change",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckRule {
    pub kind: CheckKind,
    /// The rule that reports the findings (empty for `allow`).
    pub rule: Name,
    /// `on unknown_key allow`: no finding; the keys the record does not declare are ignored.
    pub allow: bool,
    pub span: Span,
}

/// `forbid key "k" anywhere rule id`
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Forbid {
    pub key: Name,
    pub rule: Name,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordDecl {
    pub docs: Vec<String>,
    pub name: Name,
    /// The field whose value is an entry's identity (`identity name`).
    pub identity: Option<Name>,
    pub checks: Vec<CheckRule>,
    pub fields: Vec<Field>,
    pub span: Span,
}

/// How a document kind is recognised: by top-level keys' absence, presence or value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Selector {
    /// Every test holds (`where cases present and kind absent`).
    Keys(Vec<KeyTest>),
    /// A fenced record after the one marker line of a Markdown file; the rule
    /// reports a missing, repeated or unfenced marker.
    Markdown { marker: Name, rule: Name },
    /// The file the invocation gives under this name (`given "evidence"`),
    /// and no other: never chosen by its content.
    Given(Name),
}

/// One test of a selector on a top-level key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyTest {
    pub key: Name,
    pub test: KeyCond,
    /// The whole test, `kind == "log"`.
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeyCond {
    Absent,
    Present,
    Equals(Name),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DocumentDecl {
    pub docs: Vec<String>,
    pub name: Name,
    /// The name rules use for a document of this kind.
    pub binder: Name,
    /// The name rules use for the list of every document of this kind.
    pub all_binder: Option<Name>,
    pub selector: Selector,
    pub checks: Vec<CheckRule>,
    pub forbids: Vec<Forbid>,
    /// `at most one per deployment`: a second document of the kind in one
    /// deployment is a usage error.
    pub at_most_one: Option<Span>,
    pub fields: Vec<Field>,
    /// `lines into FIELD`: the list a JSON Lines file's lines after its header fill.
    pub lines_into: Option<Name>,
    /// `list into FIELD`: a document whose root is a list is the record whose FIELD holds it.
    pub list_into: Option<Name>,
    /// `on unreadable missing`: a given file that cannot be read or parsed,
    /// or whose root is not of the kind's shape, reads as missing evidence.
    pub unreadable_missing: Option<Span>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Field {
    pub docs: Vec<String>,
    pub name: Name,
    pub optional: bool,
    pub ty: TypeExpr,
    /// `or null`: the field may hold null (a value of its own, never absent).
    pub nullable: Option<Span>,
    /// `or one`: a list field that may be written as a single value.
    pub one: Option<Span>,
    /// `complete`: a map keyed by an enumeration must have every variant as a key.
    pub complete: Option<Span>,
    pub default: Option<DefaultValue>,
    pub bounds: Vec<Bound>,
    pub unique: Option<Name>,
    /// `invalid rule ID`: the rule a value of the wrong type is a finding of.
    pub invalid: Option<Name>,
    /// `grows tighter` or `shrinks tighter`: which way a list tightens.
    pub growth: Option<(Growth, Span)>,
    pub span: Span,
}

/// Which way a list changes when it tightens.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Growth {
    /// More entries is tighter (checker slots, relations a slot must satisfy).
    Grows,
    /// Fewer entries is tighter (the classes allowed to run unattended).
    Shrinks,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TypeExpr {
    Named(Name),
    Int {
        min: Option<i64>,
        span: Span,
    },
    List(Box<TypeExpr>, Span),
    Map(Name, Box<TypeExpr>, Span),
    /// A record inline, or a path to a file holding one.
    Ref(Name, Span),
}

impl TypeExpr {
    pub fn span(&self) -> Span {
        match self {
            TypeExpr::Named(n) => n.span,
            TypeExpr::Int { span, .. }
            | TypeExpr::List(_, span)
            | TypeExpr::Map(_, _, span)
            | TypeExpr::Ref(_, span) => *span,
        }
    }
}

/// `matrix.column`
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ColumnRef {
    pub matrix: Name,
    pub column: Name,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DefaultValue {
    Column(ColumnRef),
    Literal(Literal),
    EmptyList(Span),
    /// `default {}`: a record or a map left out is read as written empty.
    EmptyMap(Span),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum BoundKind {
    Floor,
    Ceiling,
}

/// `floor matrix.column rule id`: a tighten-only bound on a field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bound {
    pub kind: BoundKind,
    pub column: ColumnRef,
    pub rule: Name,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatrixDecl {
    pub docs: Vec<String>,
    pub name: Name,
    pub key_enum: Name,
    pub columns: Vec<Column>,
    pub rows: Vec<Row>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Column {
    pub name: Name,
    pub ty: Name,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    pub key: Name,
    pub cells: Vec<Literal>,
    pub span: Span,
}

/// Which side of an authorisation request an attribute belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum RequestSide {
    Principal,
    Resource,
}

/// `question id action "name" for x in xs as resource.attr ... allow expr`:
/// for every tuple of its variables, whether the action is allowed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QuestionDecl {
    pub docs: Vec<String>,
    pub id: Name,
    pub action: Name,
    pub vars: Vec<QuestionVar>,
    pub allow: Expr,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QuestionVar {
    pub pattern: Pattern,
    pub domain: Expr,
    pub side: RequestSide,
    pub attribute: Name,
    pub span: Span,
}

/// `table ID for ... row NAME = EXPR column NAME = EXPR ... detail EXPR`:
/// values read from documents, a row per tuple of its `for`s.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableDecl {
    pub docs: Vec<String>,
    pub id: Name,
    /// `for` and `let` clauses, in order.
    pub clauses: Vec<Clause>,
    /// What names a row.
    pub row: TableColumn,
    pub columns: Vec<TableColumn>,
    /// The values listed under a row when it is explained, and the span of the line.
    pub detail: Option<(Expr, Span)>,
    /// `line "..."`: the row as a verdict line, and the span of the clause.
    pub line: Option<(Template, Span)>,
    pub span: Span,
}

/// `column NAME = EXPR` (or `row NAME = EXPR`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableColumn {
    pub name: Name,
    pub value: Expr,
    pub span: Span,
}

/// `layers of Binding { layer security ... }`: the layers of trust of a
/// document kind, most trusted first. The caller binds a document to its
/// layer; the document may only claim one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LayersDecl {
    pub docs: Vec<String>,
    /// The document kind layered.
    pub document: Name,
    /// `claimed by layer`: the top-level key a document may claim its layer with.
    pub claim: Option<Name>,
    /// `standalone`: a lone unbound document of the kind is of the most trusted layer.
    pub standalone: Option<Span>,
    /// `separate`: each document is read apart; several may share a layer, none is merged.
    pub separate: Option<Span>,
    /// `trusted from LAYER rule ID`: documents bound below LAYER are findings of ID, and not read.
    pub trusted: Option<(Name, Name)>,
    pub layers: Vec<LayerDecl>,
    /// `only security sets a, b`: fields only that layer may set.
    pub only: Vec<(Name, Vec<Name>)>,
    /// `any layer sets a, b`: fields every layer may set freely.
    pub free: Vec<Name>,
    pub checks: Vec<CheckRule>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LayerDecl {
    pub name: Name,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FnDecl {
    pub docs: Vec<String>,
    pub name: Name,
    pub params: Vec<Name>,
    pub body: Expr,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleDecl {
    pub docs: Vec<String>,
    pub id: Name,
    pub clauses: Vec<Clause>,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    Fail,
    Unknown,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Clause {
    For {
        pattern: Pattern,
        domain: Expr,
        filter: Option<Expr>,
        span: Span,
    },
    When {
        guard: Expr,
        reason: Option<Template>,
        /// `else report "..."`: a false guard reports, it does not skip.
        report: bool,
        span: Span,
    },
    Let {
        name: Name,
        value: Expr,
        span: Span,
    },
    Require {
        check: Expr,
        outcome: Outcome,
        message: Template,
        span: Span,
    },
    /// `at EXPR`, or `at EXPR by position` (`positional`).
    At {
        location: Expr,
        positional: bool,
        span: Span,
    },
}

impl Clause {
    pub fn span(&self) -> Span {
        match self {
            Clause::For { span, .. }
            | Clause::When { span, .. }
            | Clause::Let { span, .. }
            | Clause::Require { span, .. }
            | Clause::At { span, .. } => *span,
        }
    }
}

/// What a `for` or a quantifier binds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pattern {
    /// `x`: an element (of a list), a key (of a map or an enumeration).
    One(Name),
    /// `k, v`: a map entry.
    Entry(Name, Name),
    /// `(a, b)`: a pair from `pairs(...)`.
    Pair(Name, Name),
}

impl Pattern {
    pub fn names(&self) -> Vec<&Name> {
        match self {
            Pattern::One(a) => vec![a],
            Pattern::Entry(a, b) | Pattern::Pair(a, b) => vec![a, b],
        }
    }
}

/// A message with `{expr}` holes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Template {
    pub parts: Vec<TemplatePart>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TemplatePart {
    Text(String),
    Hole(Expr),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Literal {
    Int(i64, Span),
    Bool(bool, Span),
    Str(String, Span),
    /// A bare name in a matrix cell: an enumeration variant.
    Name(Name),
}

impl Literal {
    pub fn span(&self) -> Span {
        match self {
            Literal::Int(_, s) | Literal::Bool(_, s) | Literal::Str(_, s) => *s,
            Literal::Name(n) => n.span,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    Coalesce,
    Or,
    And,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    In,
    NotIn,
    TighterThan,
    LooserThan,
    Concat,
    Add,
    Sub,
    Mul,
}

impl BinOp {
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Coalesce => "??",
            BinOp::Or => "or",
            BinOp::And => "and",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::In => "in",
            BinOp::NotIn => "not in",
            BinOp::TighterThan => "tighter_than",
            BinOp::LooserThan => "looser_than",
            BinOp::Concat => "++",
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Quantifier {
    Every,
    Some,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExprKind {
    Lit(Literal),
    Name(Name),
    Field(Box<Expr>, Name),
    Index(Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    Call(Name, Vec<Expr>),
    List(Vec<Expr>),
    Set(Vec<Expr>),
    Quant {
        kind: Quantifier,
        pattern: Pattern,
        domain: Box<Expr>,
        body: Box<Expr>,
    },
    /// `count(x in domain by key)`
    CountBy {
        var: Name,
        domain: Box<Expr>,
        key: Box<Expr>,
    },
    /// `[value for pattern in domain if filter]`
    Comprehension {
        value: Box<Expr>,
        pattern: Pattern,
        domain: Box<Expr>,
        filter: Option<Box<Expr>>,
    },
}
