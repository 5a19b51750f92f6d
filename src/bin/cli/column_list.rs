//! `--columns`: a comma-separated list of column names. A name in double quotes is taken as
//! written, commas and spaces included (`"a,b"`, `" lead"`; `""` inside quotes is one `"`);
//! an unquoted name loses the spaces around it (`--columns "id, city"`).

use delta_arrow_reader::DeltaError;

/// The names of every `--columns` given, in order.
pub fn column_list(args: &[String]) -> Result<Vec<String>, DeltaError> {
    let mut names = Vec::new();
    for arg in args {
        names.extend(split(arg)?);
    }
    Ok(names)
}

/// The names of one `--columns` value.
fn split(text: &str) -> Result<Vec<String>, DeltaError> {
    let invalid = |reason: String| DeltaError::InvalidArgument {
        reason: format!("--columns {text:?}: {reason}"),
    };
    let mut names = Vec::new();
    let mut chars = text.chars().peekable();
    loop {
        // One item: spaces, then a quoted name or the text up to the next comma.
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        let name = if chars.next_if_eq(&'"').is_some() {
            let mut name = String::new();
            loop {
                match chars.next() {
                    Some('"') if chars.next_if_eq(&'"').is_some() => name.push('"'),
                    Some('"') => break,
                    Some(c) => name.push(c),
                    None => return Err(invalid("a quoted name has no closing \"".into())),
                }
            }
            while chars.next_if(|c| c.is_whitespace()).is_some() {}
            if chars.peek().is_some_and(|&c| c != ',') {
                return Err(invalid(format!(
                    "text after the quoted name \"{name}\" (a comma should follow it)"
                )));
            }
            name
        } else {
            let mut name = String::new();
            while let Some(c) = chars.next_if(|&c| c != ',') {
                name.push(c);
            }
            name.trim_end().to_string()
        };
        names.push(name);
        if chars.next().is_none() {
            break;
        }
    }
    if names.iter().any(String::is_empty) {
        return Err(invalid(
            "an empty column name (\"\", two commas in a row, or a comma at an end)".into(),
        ));
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(args: &[&str]) -> Result<Vec<String>, String> {
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        column_list(&args).map_err(|e| e.to_string())
    }

    #[test]
    fn splits_on_commas_outside_quotes() {
        assert_eq!(names(&["id,city"]), Ok(vec!["id".into(), "city".into()]));
        assert_eq!(
            names(&[" id , city "]),
            Ok(vec!["id".into(), "city".into()])
        );
        assert_eq!(names(&["id", "city"]), Ok(vec!["id".into(), "city".into()]));
        assert_eq!(
            names(&[r#""a,b", " lead",c d"#]),
            Ok(vec!["a,b".into(), " lead".into(), "c d".into()])
        );
        assert_eq!(names(&[r#""say ""hi""""#]), Ok(vec![r#"say "hi""#.into()]));
        assert_eq!(names(&["Ünï"]), Ok(vec!["Ünï".into()]));
    }

    #[test]
    fn refuses_what_names_no_column() {
        for bad in ["", "a,,b", "a,", ",a", r#""a"#, r#""a"b"#, r#""""#] {
            let got = names(&[bad]);
            assert!(
                got.as_ref().is_err_and(|e| e.contains("--columns")),
                "{bad:?}: {got:?}"
            );
        }
    }
}
