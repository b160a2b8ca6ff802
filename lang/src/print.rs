//! Prints expressions back as source text, with the fewest parentheses that
//! keep their meaning. Used for explanations and by the formatter.

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

fn strength(e: &Expr) -> u8 {
    match &e.kind {
        ExprKind::Binary(op, ..) => precedence(*op),
        ExprKind::Not(_) => NOT_PRECEDENCE,
        // A quantifier's body runs to the end: it binds loosest of all.
        ExprKind::Quant { .. } => 0,
        _ => ATOM,
    }
}

/// The source text of an expression.
pub fn expr(e: &Expr) -> String {
    let mut out = String::new();
    write_expr(&mut out, e);
    out
}

fn child(out: &mut String, e: &Expr, min: u8) {
    if strength(e) < min {
        out.push('(');
        write_expr(out, e);
        out.push(')');
    } else {
        write_expr(out, e);
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

fn list(out: &mut String, items: &[Expr]) {
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_expr(out, item);
    }
}

fn write_expr(out: &mut String, e: &Expr) {
    match &e.kind {
        ExprKind::Lit(l) => out.push_str(&literal(l)),
        ExprKind::Name(n) => out.push_str(&n.text),
        ExprKind::Field(base, name) => {
            child(out, base, ATOM);
            out.push('.');
            out.push_str(&name.text);
        }
        ExprKind::Index(base, idx) => {
            child(out, base, ATOM);
            out.push('[');
            write_expr(out, idx);
            out.push(']');
        }
        ExprKind::Not(inner) => {
            out.push_str("not ");
            child(out, inner, NOT_PRECEDENCE);
        }
        ExprKind::Binary(op, a, b) => {
            let p = precedence(*op);
            child(out, a, p);
            out.push(' ');
            out.push_str(op.symbol());
            out.push(' ');
            // Left associative: a right operand of equal strength needs parentheses.
            child(out, b, p + 1);
        }
        ExprKind::Call(name, args) => {
            out.push_str(&name.text);
            out.push('(');
            list(out, args);
            out.push(')');
        }
        ExprKind::List(items) => {
            out.push('[');
            list(out, items);
            out.push(']');
        }
        ExprKind::Set(items) => {
            out.push('{');
            list(out, items);
            out.push('}');
        }
        ExprKind::Quant { kind, pattern: p, domain, body } => {
            out.push_str(match kind {
                Quantifier::Every => "every ",
                Quantifier::Some => "some ",
            });
            out.push_str(&pattern(p));
            out.push_str(" in ");
            write_expr(out, domain);
            out.push_str(": ");
            write_expr(out, body);
        }
        ExprKind::CountBy { var, domain, key } => {
            out.push_str("count(");
            out.push_str(&var.text);
            out.push_str(" in ");
            write_expr(out, domain);
            out.push_str(" by ");
            write_expr(out, key);
            out.push(')');
        }
        ExprKind::Comprehension { value, pattern: p, domain, filter } => {
            out.push('[');
            write_expr(out, value);
            out.push_str(" for ");
            out.push_str(&pattern(p));
            out.push_str(" in ");
            write_expr(out, domain);
            if let Some(f) = filter {
                out.push_str(" if ");
                write_expr(out, f);
            }
            out.push(']');
        }
    }
}
