//! The wire form of the reader's values and filters: [`ScalarWire`] and [`ExprWire`].
//!
//! Exact and deterministic: every value is written as its type and one canonical text
//! (integers in decimal, floating point numbers as the hexadecimal bits of their IEEE 754
//! form, so `-0.0` and every NaN payload come back unchanged, binaries in hexadecimal, dates
//! as days and timestamps as microseconds since the epoch, decimals as their unscaled
//! value). A value that does not parse back to its type is an error, never a different value.

use serde::{Deserialize, Serialize};

use crate::error::{DeltaError, Result};
use crate::predicate::{CompareOp, Expr, Scalar};
use crate::schema::PrimitiveType;

/// One typed value; `value` is `None` for a null of `type`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ScalarWire {
    #[serde(rename = "type")]
    pub(crate) ty: PrimitiveType,
    pub(crate) value: Option<String>,
}

/// A filter expression (the reader's [`Expr`], node for node).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "kind", deny_unknown_fields)]
pub(crate) enum ExprWire {
    Column {
        path: Vec<String>,
    },
    Literal {
        value: ScalarWire,
    },
    Compare {
        op: String,
        left: Box<ExprWire>,
        right: Box<ExprWire>,
    },
    And {
        operands: Vec<ExprWire>,
    },
    Or {
        operands: Vec<ExprWire>,
    },
    Not {
        operand: Box<ExprWire>,
    },
    IsNull {
        operand: Box<ExprWire>,
    },
    IsNotNull {
        operand: Box<ExprWire>,
    },
    In {
        operand: Box<ExprWire>,
        list: Vec<ScalarWire>,
        negated: bool,
    },
}

fn bad(reason: String) -> DeltaError {
    DeltaError::InvalidArgument {
        reason: format!("the scan's wire form is invalid: {reason}"),
    }
}

impl ScalarWire {
    pub(crate) fn from_scalar(s: &Scalar) -> ScalarWire {
        let value = match s {
            Scalar::String(v) => Some(v.clone()),
            Scalar::Long(v) => Some(v.to_string()),
            Scalar::Integer(v) => Some(v.to_string()),
            Scalar::Short(v) => Some(v.to_string()),
            Scalar::Byte(v) => Some(v.to_string()),
            Scalar::Float(v) => Some(format!("{:08x}", v.to_bits())),
            Scalar::Double(v) => Some(format!("{:016x}", v.to_bits())),
            Scalar::Boolean(v) => Some(v.to_string()),
            Scalar::Binary(v) => Some(hex(v)),
            Scalar::Date(v) => Some(v.to_string()),
            Scalar::Timestamp(v) | Scalar::TimestampNtz(v) => Some(v.to_string()),
            Scalar::Decimal(v, _) => Some(v.to_string()),
            Scalar::Null(_) => None,
        };
        ScalarWire {
            ty: s.data_type(),
            value,
        }
    }

    pub(crate) fn to_scalar(&self) -> Result<Scalar> {
        let Some(text) = &self.value else {
            return Ok(Scalar::Null(self.ty));
        };
        fn num<T: std::str::FromStr>(text: &str, ty: PrimitiveType) -> Result<T> {
            text.parse()
                .map_err(|_| bad(format!("'{text}' is not a {ty} value")))
        }
        let bits = |text: &str, digits: usize| -> Result<u64> {
            if text.len() != digits {
                return Err(bad(format!("'{text}' is not {digits} hexadecimal digits")));
            }
            u64::from_str_radix(text, 16).map_err(|_| bad(format!("'{text}' is not hexadecimal")))
        };
        let ty = self.ty;
        Ok(match ty {
            PrimitiveType::String => Scalar::String(text.clone()),
            PrimitiveType::Long => Scalar::Long(num(text, ty)?),
            PrimitiveType::Integer => Scalar::Integer(num(text, ty)?),
            PrimitiveType::Short => Scalar::Short(num(text, ty)?),
            PrimitiveType::Byte => Scalar::Byte(num(text, ty)?),
            PrimitiveType::Float => {
                let b = u32::try_from(bits(text, 8)?).map_err(|e| bad(e.to_string()))?;
                Scalar::Float(f32::from_bits(b))
            }
            PrimitiveType::Double => Scalar::Double(f64::from_bits(bits(text, 16)?)),
            PrimitiveType::Boolean => Scalar::Boolean(num(text, ty)?),
            PrimitiveType::Binary => Scalar::Binary(hex_bytes(text)?),
            PrimitiveType::Date => Scalar::Date(num(text, ty)?),
            PrimitiveType::Timestamp => Scalar::Timestamp(num(text, ty)?),
            PrimitiveType::TimestampNtz => Scalar::TimestampNtz(num(text, ty)?),
            PrimitiveType::Decimal(d) => Scalar::decimal(num(text, ty)?, d.precision(), d.scale())?,
            PrimitiveType::Variant | PrimitiveType::Void => {
                return Err(bad(format!("a {ty} value cannot be a literal")))
            }
        })
    }
}

/// `bytes` in lowercase hexadecimal.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The bytes of a hexadecimal text.
pub(crate) fn hex_bytes(text: &str) -> Result<Vec<u8>> {
    if !text.len().is_multiple_of(2) || !text.is_ascii() {
        return Err(bad(format!("'{text}' is not hexadecimal bytes")));
    }
    (0..text.len())
        .step_by(2)
        .map(|i| {
            text.get(i..i + 2)
                .and_then(|pair| u8::from_str_radix(pair, 16).ok())
                .ok_or_else(|| bad(format!("'{text}' is not hexadecimal bytes")))
        })
        .collect()
}

impl ExprWire {
    pub(crate) fn from_expr(e: &Expr) -> ExprWire {
        let boxed = |e: &Expr| Box::new(ExprWire::from_expr(e));
        let all = |list: &[Expr]| list.iter().map(ExprWire::from_expr).collect();
        match e {
            Expr::Column(path) => ExprWire::Column { path: path.clone() },
            Expr::Literal(s) => ExprWire::Literal {
                value: ScalarWire::from_scalar(s),
            },
            Expr::Compare { op, left, right } => ExprWire::Compare {
                op: op.symbol().to_string(),
                left: boxed(left),
                right: boxed(right),
            },
            Expr::And(list) => ExprWire::And {
                operands: all(list),
            },
            Expr::Or(list) => ExprWire::Or {
                operands: all(list),
            },
            Expr::Not(e) => ExprWire::Not { operand: boxed(e) },
            Expr::IsNull(e) => ExprWire::IsNull { operand: boxed(e) },
            Expr::IsNotNull(e) => ExprWire::IsNotNull { operand: boxed(e) },
            Expr::In {
                expr,
                list,
                negated,
            } => ExprWire::In {
                operand: boxed(expr),
                list: list.iter().map(ScalarWire::from_scalar).collect(),
                negated: *negated,
            },
        }
    }

    pub(crate) fn to_expr(&self) -> Result<Expr> {
        let boxed = |e: &ExprWire| e.to_expr().map(Box::new);
        let all = |list: &[ExprWire]| list.iter().map(ExprWire::to_expr).collect::<Result<_>>();
        Ok(match self {
            ExprWire::Column { path } => Expr::Column(path.clone()),
            ExprWire::Literal { value } => Expr::Literal(value.to_scalar()?),
            ExprWire::Compare { op, left, right } => Expr::Compare {
                op: CompareOp::ALL
                    .into_iter()
                    .find(|c| c.symbol() == op)
                    .ok_or_else(|| bad(format!("'{op}' is not a comparison")))?,
                left: boxed(left)?,
                right: boxed(right)?,
            },
            ExprWire::And { operands } => Expr::And(all(operands)?),
            ExprWire::Or { operands } => Expr::Or(all(operands)?),
            ExprWire::Not { operand } => Expr::Not(boxed(operand)?),
            ExprWire::IsNull { operand } => Expr::IsNull(boxed(operand)?),
            ExprWire::IsNotNull { operand } => Expr::IsNotNull(boxed(operand)?),
            ExprWire::In {
                operand,
                list,
                negated,
            } => Expr::In {
                expr: boxed(operand)?,
                list: list
                    .iter()
                    .map(ScalarWire::to_scalar)
                    .collect::<Result<_>>()?,
                negated: *negated,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::predicate::{col, lit};

    fn scalars() -> Vec<Scalar> {
        let mut all = vec![
            Scalar::String("a'b\u{e9}\n".into()),
            Scalar::Long(i64::MIN),
            Scalar::Integer(-7),
            Scalar::Short(i16::MAX),
            Scalar::Byte(-128),
            Scalar::Float(-0.0),
            Scalar::Float(f32::from_bits(0x7fc0_0001)),
            Scalar::Double(1.0 / 3.0),
            Scalar::Double(f64::NEG_INFINITY),
            Scalar::Boolean(true),
            Scalar::Binary(vec![0, 255, 16]),
            Scalar::Date(-1),
            Scalar::Timestamp(1_700_000_000_123_456),
            Scalar::TimestampNtz(-5),
            Scalar::Null(PrimitiveType::Long),
            Scalar::Null(PrimitiveType::Void),
        ];
        all.extend(Scalar::decimal(-12345678901234567890123456789012345678, 38, 5).ok());
        all
    }

    #[test]
    fn every_value_comes_back_bit_for_bit() {
        for s in scalars() {
            let wire = ScalarWire::from_scalar(&s);
            let json = serde_json::to_string(&wire).unwrap_or_default();
            let back: ScalarWire = serde_json::from_str(&json).unwrap_or(ScalarWire {
                ty: PrimitiveType::Void,
                value: Some("?".into()),
            });
            let again = back
                .to_scalar()
                .unwrap_or(Scalar::Null(PrimitiveType::Void));
            match (&s, &again) {
                (Scalar::Float(a), Scalar::Float(b)) => assert_eq!(a.to_bits(), b.to_bits()),
                (Scalar::Double(a), Scalar::Double(b)) => assert_eq!(a.to_bits(), b.to_bits()),
                _ => assert_eq!(s, again, "{json}"),
            }
        }
    }

    #[test]
    fn every_node_comes_back() {
        let e = col("a")
            .eq(lit(3i64))
            .and(Expr::Not(Box::new(col("b").is_null())))
            .or(Expr::In {
                expr: Box::new(crate::predicate::column(["s", "x"])),
                list: scalars(),
                negated: true,
            })
            .or(Expr::IsNotNull(Box::new(col("c"))))
            .or(Expr::Compare {
                op: CompareOp::GtEq,
                left: Box::new(lit(2.5f64)),
                right: Box::new(col("d")),
            });
        let wire = ExprWire::from_expr(&e);
        let json = serde_json::to_string(&wire).unwrap_or_default();
        let back: ExprWire = serde_json::from_str(&json).unwrap_or(ExprWire::And {
            operands: Vec::new(),
        });
        // NaN is not equal to itself: compare the wire forms, which hold the bits.
        let again = back.to_expr().map(|e| ExprWire::from_expr(&e));
        assert_eq!(again.ok(), Some(wire));
    }

    #[test]
    fn values_that_do_not_parse_are_errors() {
        for (ty, value) in [
            (PrimitiveType::Long, "1.5"),
            (PrimitiveType::Byte, "300"),
            (PrimitiveType::Double, "3ff0"),
            (PrimitiveType::Float, "zzzzzzzz"),
            (PrimitiveType::Binary, "abc"),
            (PrimitiveType::Binary, "é1"),
            (PrimitiveType::Boolean, "yes"),
            (PrimitiveType::Variant, "00"),
        ] {
            let wire = ScalarWire {
                ty,
                value: Some(value.into()),
            };
            let err = wire.to_scalar().err().map(|e| e.code());
            assert_eq!(err, Some("invalid_argument"), "{ty} {value}");
        }
        let op = ExprWire::Compare {
            op: "~".into(),
            left: Box::new(ExprWire::Column {
                path: vec!["a".into()],
            }),
            right: Box::new(ExprWire::Column {
                path: vec!["b".into()],
            }),
        };
        assert!(op.to_expr().is_err());
    }
}
