//! Prints expressions, messages and types back as source text: with the
//! fewest parentheses that keep their meaning for explanations, with the
//! parentheses of the source for the formatter ([`Printer::keeping`]).

use crate::ast::*;

/// Binding strength of a binary operator, as the parser's Pratt table has it.
fn precedence(op: BinOp) -> u8 {
    match op {
        BinOp::Or => 1,
        BinOp::And => 2,
        // 3 is `not`
        BinOp::Eq
        | BinOp::Ne
        | BinOp::Lt
        | BinOp::Le
        | BinOp::Gt
        | BinOp::Ge
        | BinOp::In
        | BinOp::NotIn
        | BinOp::TighterThan
        | BinOp::LooserThan => 4,
        BinOp::Coalesce => 5,
        BinOp::Add | BinOp::Sub | BinOp::Concat => 6,
        BinOp::Mul => 7,
    }
}

const NOT_PRECEDENCE: u8 = 3;
const ATOM: u8 = 10;

/// How tightly `e` holds together when printed. `tail`: nothing follows `e`
/// up to the end of the enclosing expression or bracket.
fn strength(e: &Expr, tail: bool) -> u8 {
    match &e.kind {
        ExprKind::Binary(op, ..) => precedence(*op),
        ExprKind::Not(_) => NOT_PRECEDENCE,
        // A quantifier's body runs to the end of the expression: last, it
        // needs no parentheses; anywhere else it binds loosest of all.
        ExprKind::Quant { .. } if tail => ATOM,
        ExprKind::Quant { .. } => 0,
        _ => ATOM,
    }
}

/// The source text of an expression, with the fewest parentheses.
pub fn expr(e: &Expr) -> String {
    Printer::default().expr(e)
}

/// A message, with the fewest parentheses in its holes.
pub fn template(t: &Template) -> String {
    Printer::default().template(t)
}

/// An operand of a chain of `and`s or `or`s.
pub struct Operand<'e> {
    pub expr: &'e Expr,
    /// Printed in parentheses.
    pub parens: bool,
}

/// Prints expressions. By default with the fewest parentheses that keep
/// their meaning, and a quantifier in parentheses unless it stands alone;
/// [`Printer::keeping`] keeps the parentheses the source wrote instead, and
/// adds none around a quantifier that ends its expression.
#[derive(Default)]
pub struct Printer<'k> {
    keep: Option<&'k dyn Fn(&Expr) -> bool>,
}

impl<'k> Printer<'k> {
    /// A printer that also puts in parentheses each expression for which
    /// `written` is true (the formatter: those the source put in parentheses).
    pub fn keeping(written: &'k dyn Fn(&Expr) -> bool) -> Printer<'k> {
        Printer { keep: Some(written) }
    }

    fn kept(&self, e: &Expr) -> bool {
        self.keep.is_some_and(|keep| keep(e))
    }

    /// Whether `e` is printed in parentheses where it needs a strength of
    /// `min`, `tail` as in [`strength`].
    fn parens(&self, e: &Expr, min: u8, tail: bool) -> bool {
        self.kept(e) || strength(e, tail && self.keep.is_some()) < min
    }

    /// The text of an expression standing alone.
    pub fn expr(&self, e: &Expr) -> String {
        let mut out = String::new();
        self.child(&mut out, e, 0, true);
        out
    }

    /// The text of an expression without the parentheses kept around it.
    pub fn bare(&self, e: &Expr) -> String {
        let mut out = String::new();
        self.write(&mut out, e, true);
        out
    }

    /// Whether the expression standing alone is printed in parentheses.
    pub fn parenthesized(&self, e: &Expr) -> bool {
        self.parens(e, 0, true)
    }

    fn child(&self, out: &mut String, e: &Expr, min: u8, tail: bool) {
        if self.parens(e, min, tail) {
            out.push('(');
            self.write(out, e, true);
            out.push(')');
        } else {
            self.write(out, e, tail);
        }
    }

    /// The operands of a chain of one logical operator (`a and b and c`), as
    /// they print inside the chain: each joined to the one before it by the
    /// operator gives [`Printer::bare`]. `None` unless `e` is an `and` or an
    /// `or`.
    pub fn chain<'e>(&self, e: &'e Expr) -> Option<(BinOp, Vec<Operand<'e>>)> {
        let ExprKind::Binary(op @ (BinOp::And | BinOp::Or), ..) = &e.kind else { return None };
        let mut operands = Vec::new();
        self.operands(e, *op, true, &mut operands);
        Some((*op, operands))
    }

    fn operands<'e>(&self, e: &'e Expr, op: BinOp, tail: bool, out: &mut Vec<Operand<'e>>) {
        match &e.kind {
            ExprKind::Binary(o, a, b) if *o == op => {
                let a_parens = self.parens(a, precedence(op), false);
                if a_parens {
                    out.push(Operand { expr: a, parens: true });
                } else {
                    self.operands(a, op, false, out);
                }
                out.push(Operand { expr: b, parens: self.parens(b, precedence(op) + 1, tail) });
            }
            _ => out.push(Operand { expr: e, parens: false }),
        }
    }

    /// A quantifier's head (`every x in xs:`) and its body. `None` unless
    /// `e` is a quantifier.
    pub fn quantifier<'e>(&self, e: &'e Expr) -> Option<(String, &'e Expr)> {
        let ExprKind::Quant { kind, pattern: p, domain, body } = &e.kind else { return None };
        Some((self.quantifier_head(*kind, p, domain), body))
    }

    fn quantifier_head(&self, kind: Quantifier, p: &Pattern, domain: &Expr) -> String {
        let mut head = String::from(match kind {
            Quantifier::Every => "every ",
            Quantifier::Some => "some ",
        });
        head.push_str(&pattern(p));
        head.push_str(" in ");
        // A quantifier as the domain would swallow the `:`.
        self.child(&mut head, domain, 1, false);
        head.push(':');
        head
    }

    fn list(&self, out: &mut String, items: &[Expr]) {
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            self.child(out, item, 0, true);
        }
    }

    /// Writes `e` without parentheses around it; `tail` as in [`strength`].
    fn write(&self, out: &mut String, e: &Expr, tail: bool) {
        match &e.kind {
            ExprKind::Lit(l) => out.push_str(&literal(l)),
            ExprKind::Name(n) => out.push_str(&n.text),
            ExprKind::Field(base, name) => {
                self.child(out, base, ATOM, false);
                out.push('.');
                out.push_str(&name.text);
            }
            ExprKind::Index(base, idx) => {
                self.child(out, base, ATOM, false);
                out.push('[');
                self.child(out, idx, 0, true);
                out.push(']');
            }
            ExprKind::Not(inner) => {
                out.push_str("not ");
                self.child(out, inner, NOT_PRECEDENCE, tail);
            }
            ExprKind::Binary(op, a, b) => {
                let p = precedence(*op);
                self.child(out, a, p, false);
                out.push(' ');
                out.push_str(op.symbol());
                out.push(' ');
                // Left associative: a right operand of equal strength needs parentheses.
                self.child(out, b, p + 1, tail);
            }
            ExprKind::Call(name, args) => {
                out.push_str(&name.text);
                out.push('(');
                self.list(out, args);
                out.push(')');
            }
            ExprKind::List(items) => {
                out.push('[');
                self.list(out, items);
                out.push(']');
            }
            ExprKind::Set(items) => {
                out.push('{');
                self.list(out, items);
                out.push('}');
            }
            ExprKind::Quant { kind, pattern: p, domain, body } => {
                out.push_str(&self.quantifier_head(*kind, p, domain));
                out.push(' ');
                self.child(out, body, 0, tail);
            }
            ExprKind::CountBy { var, domain, key } => {
                out.push_str("count(");
                out.push_str(&var.text);
                out.push_str(" in ");
                // A quantifier as the domain would swallow the `by`.
                self.child(out, domain, 1, false);
                out.push_str(" by ");
                self.child(out, key, 0, true);
                out.push(')');
            }
            ExprKind::Comprehension { value, pattern: p, domain, filter } => {
                out.push('[');
                self.child(out, value, 0, true);
                out.push_str(" for ");
                out.push_str(&pattern(p));
                out.push_str(" in ");
                self.child(out, domain, 1, false);
                if let Some(f) = filter {
                    out.push_str(" if ");
                    self.child(out, f, 0, true);
                }
                out.push(']');
            }
        }
    }

    /// A message: its text with the escapes the grammar knows (braces
    /// escaped, so they are not read as holes) and its holes as `{expr}`.
    pub fn template(&self, t: &Template) -> String {
        let mut out = String::from("\"");
        for part in &t.parts {
            match part {
                TemplatePart::Text(text) => {
                    for c in text.chars() {
                        match c {
                            '"' => out.push_str("\\\""),
                            '\\' => out.push_str("\\\\"),
                            '\n' => out.push_str("\\n"),
                            '\t' => out.push_str("\\t"),
                            '{' => out.push_str("\\{"),
                            '}' => out.push_str("\\}"),
                            c => out.push(c),
                        }
                    }
                }
                TemplatePart::Hole(e) => {
                    out.push('{');
                    self.child(&mut out, e, 0, true);
                    out.push('}');
                }
            }
        }
        out.push('"');
        out
    }
}

pub fn literal(l: &Literal) -> String {
    match l {
        Literal::Int(i, _) => i.to_string(),
        Literal::Bool(b, _) => b.to_string(),
        Literal::Str(s, _) => quote(s),
        Literal::Name(n) => n.text.clone(),
    }
}

/// A string literal with the escapes the grammar knows.
pub fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

pub fn pattern(p: &Pattern) -> String {
    match p {
        Pattern::One(a) => a.text.clone(),
        Pattern::Entry(a, b) => format!("{}, {}", a.text, b.text),
        Pattern::Pair(a, b) => format!("({}, {})", a.text, b.text),
    }
}

/// A field's type: `int >= 1`, `list Slot`, `map WorkClass -> Force`.
pub fn type_expr(t: &TypeExpr) -> String {
    match t {
        TypeExpr::Named(n) => n.text.clone(),
        TypeExpr::Int { min: None, .. } => "int".to_string(),
        TypeExpr::Int { min: Some(min), .. } => format!("int >= {min}"),
        TypeExpr::List(elem, _) => format!("list {}", type_expr(elem)),
        TypeExpr::Map(key, value, _) => format!("map {} -> {}", key.text, type_expr(value)),
        TypeExpr::Ref(record, _) => format!("ref {}", record.text),
    }
}
