//! Forms MCP servers ask the user to fill in (elicitation) while a tool call runs. The REPL shows
//! which server asks and why and lists the fields; the user answers, declines or cancels. To
//! answer, each field is asked on a line of its own — title, type and bounds, description,
//! numbered choices — with the server's default already typed (Enter keeps it). What is typed is
//! parsed and checked against the field ([`synapse_shared::elicit`]) and asked again until it
//! fits; a summary precedes the final send. Ctrl-C or Ctrl-D at any prompt cancels the form (not
//! the turn). The answer goes back on the chat stream and the turn goes on. In URL mode the server
//! asks the user to open a page instead (a sign-in, a payment): the REPL shows the URL and waits
//! until the user says they went through it, or declines.

use serde_json::{Map, Value};
use synapse_session::{Answer, FormAction, FormQuestion};
use synapse_shared::elicit::{Field, FieldKind, Form};

use super::front::Asker;
use super::input::Reply;
use crate::render::safe_text::strip_controls;
use crate::render::theme::Theme;

/// Asked first: fill the form in, or not.
pub const OPEN_PROMPT: &str = "Fill it in? [a]nswer / [d]ecline / [c]ancel: ";
/// Asked after the summary.
pub const SEND_PROMPT: &str = "Send? [y]es / [d]ecline / [c]ancel: ";
/// Asked under a URL-mode request, once the user has had the page.
pub const URL_PROMPT: &str = "Open it in your browser; done? [a]ccept / [d]ecline / [c]ancel: ";
/// Fields named in the form's header before the list is cut.
const LISTED_FIELDS: usize = 10;

/// What the user chose at one of the form's questions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    /// Answer the form (first question) or send the answers (last one).
    Go,
    Decline,
    Cancel,
}

impl Choice {
    fn action(self) -> FormAction {
        match self {
            Choice::Go => FormAction::Accept,
            Choice::Decline => FormAction::Decline,
            Choice::Cancel => FormAction::Cancel,
        }
    }
}

/// The first question's answer; `None` asks again.
pub fn parse_open(text: &str) -> Option<Choice> {
    match text.trim().to_lowercase().as_str() {
        "a" | "answer" | "y" | "yes" => Some(Choice::Go),
        "d" | "decline" | "n" | "no" => Some(Choice::Decline),
        "c" | "cancel" => Some(Choice::Cancel),
        _ => None,
    }
}

/// The last question's answer; `None` asks again.
pub fn parse_send(text: &str) -> Option<Choice> {
    match text.trim().to_lowercase().as_str() {
        "y" | "yes" | "s" | "send" => Some(Choice::Go),
        "d" | "decline" | "n" | "no" => Some(Choice::Decline),
        "c" | "cancel" => Some(Choice::Cancel),
        _ => None,
    }
}

/// Who asks, why, and the fields (`*` required).
pub fn header(theme: &Theme, request: &FormQuestion, form: &Form) -> String {
    let server = strip_controls(&request.server);
    let mut out = format!(
        "{} {}\n",
        theme.yellow("?"),
        theme.bold(&format!("MCP server `{server}` asks you to fill in a form"))
    );
    for line in strip_controls(&request.message).lines() {
        out.push_str(&format!("  {line}\n"));
    }
    let names: Vec<String> = form
        .fields
        .iter()
        .take(LISTED_FIELDS)
        .map(|f| format!("{}{}", f.name, if f.required { "*" } else { "" }))
        .collect();
    let more = form.fields.len().saturating_sub(LISTED_FIELDS);
    let more = if more > 0 {
        format!(", and {more} more")
    } else {
        String::new()
    };
    out.push_str(&format!(
        "  {}\n",
        theme.dim(&format!(
            "{} field{} (* required): {}{more}",
            form.fields.len(),
            if form.fields.len() == 1 { "" } else { "s" },
            names.join(", ")
        ))
    ));
    out
}

/// Who asks to open which page, and why (URL mode).
pub fn url_header(theme: &Theme, request: &FormQuestion) -> String {
    let server = strip_controls(&request.server);
    let mut out = format!(
        "{} {}\n",
        theme.yellow("?"),
        theme.bold(&format!("MCP server `{server}` asks you to open a page"))
    );
    for line in strip_controls(&request.message).lines() {
        out.push_str(&format!("  {line}\n"));
    }
    out.push_str(&format!(
        "  {}\n",
        theme.bold(&strip_controls(&request.url))
    ));
    out
}

/// What is shown above a field's input line.
pub fn field_lines(theme: &Theme, field: &Field) -> String {
    let name = strip_controls(&field.name);
    let label = strip_controls(field.label());
    let mut title = if label == name {
        name.clone()
    } else {
        format!("{label} ({name})")
    };
    if field.required {
        title.push_str(" *");
    }
    let mut out = format!(
        "  {} {}\n",
        theme.bold(&title),
        theme.dim(&format!("— {}", field.describe()))
    );
    if let Some(d) = &field.description {
        for line in strip_controls(d).lines() {
            out.push_str(&format!("    {}\n", theme.dim(line)));
        }
    }
    let options = match &field.kind {
        FieldKind::Choice { options } | FieldKind::MultiChoice { options, .. } => options,
        _ => return out,
    };
    let listed: Vec<String> = options
        .iter()
        .enumerate()
        .map(|(i, o)| format!("{}) {}", i + 1, strip_controls(o.shown())))
        .collect();
    out.push_str(&format!("    {}\n", listed.join("  ")));
    out
}

/// The input line's prompt.
pub fn field_prompt(field: &Field) -> String {
    format!("  {}> ", strip_controls(&field.name))
}

/// The answers before they are sent; fields left empty are named as such.
pub fn summary(theme: &Theme, form: &Form, values: &Map<String, Value>) -> String {
    let mut out = format!("  {}\n", theme.bold("Your answers:"));
    for field in &form.fields {
        let shown = match values.get(&field.name) {
            Some(v) => strip_controls(&field.text_of(v)),
            None => theme.dim("(empty)"),
        };
        out.push_str(&format!("    {}: {shown}\n", strip_controls(&field.name)));
    }
    out
}

/// The line printed once the form is answered.
pub fn outcome(theme: &Theme, choice: Choice, server: &str) -> String {
    let server = strip_controls(server);
    match choice {
        Choice::Go => format!("{} sent to {server}\n", theme.green("✓")),
        Choice::Decline => format!("{} declined\n", theme.red("✗")),
        Choice::Cancel => format!("{} cancelled\n", theme.dim("✗")),
    }
}

impl Asker<'_> {
    /// Asks the user to fill in `request`'s form; returns the answer for the daemon.
    pub(super) async fn fill_form(&mut self, request: &FormQuestion) -> Answer {
        let t = self.theme;
        let answer = |choice: Choice, content: &Map<String, Value>| Answer::Form {
            id: request.id.clone(),
            action: choice.action(),
            content_json: if choice == Choice::Go {
                Value::Object(content.clone()).to_string()
            } else {
                String::new()
            },
        };
        let mut values = Map::new();
        if !request.url.is_empty() {
            self.say(&url_header(&t, request));
            let choice = self.ask_choice(URL_PROMPT, parse_open).await;
            self.say(&outcome(&t, choice, &request.server));
            return answer(choice, &values);
        }
        let form = serde_json::from_str::<Value>(&request.schema_json)
            .map_err(|e| e.to_string())
            .and_then(|schema| Form::from_schema(&schema).map_err(|e| e.to_string()));
        let form = match form {
            Ok(form) => form,
            Err(e) => {
                self.say(&t.red(&format!(
                    "The form of MCP server {} cannot be shown ({e}); declined.\n",
                    strip_controls(&request.server)
                )));
                return answer(Choice::Decline, &values);
            }
        };
        self.say(&header(&t, request, &form));
        let choice = match self.ask_choice(OPEN_PROMPT, parse_open).await {
            Choice::Go => self.fill_fields(&form, &mut values).await,
            other => other,
        };
        self.say(&outcome(&t, choice, &request.server));
        answer(choice, &values)
    }

    /// Every field, then the summary and the last question.
    async fn fill_fields(&mut self, form: &Form, values: &mut Map<String, Value>) -> Choice {
        let t = self.theme;
        for field in &form.fields {
            self.say(&field_lines(&t, field));
            let mut typed = field.default_text();
            loop {
                if let Err(e) = self
                    .input
                    .request(&field_prompt(field), false, typed.clone())
                {
                    self.say(&t.red(&format!("error: {e}\n")));
                    return Choice::Cancel;
                }
                let Reply::Line(line) = self.input.reply().await else {
                    return Choice::Cancel;
                };
                match field.parse(&line) {
                    Ok(Some(value)) => {
                        values.insert(field.name.clone(), value);
                        break;
                    }
                    Ok(None) => break,
                    Err(e) => {
                        self.say(&t.red(&format!("    ✗ {e}\n")));
                        typed = line;
                    }
                }
            }
        }
        self.say(&summary(&t, form, values));
        self.ask_choice(SEND_PROMPT, parse_send).await
    }

    /// Asks `prompt` until `parse` understands the answer; Ctrl-C, Ctrl-D or a failed terminal
    /// cancel.
    async fn ask_choice(&mut self, prompt: &str, parse: fn(&str) -> Option<Choice>) -> Choice {
        loop {
            match self.input.read(prompt, false).await {
                Reply::Line(line) => match parse(&line) {
                    Some(choice) => return choice,
                    None => self.say("Please answer with one of the letters in brackets.\n"),
                },
                _ => return Choice::Cancel,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn request() -> FormQuestion {
        let schema = json!({
            "type": "object",
            "properties": {
                "name": {"title": "Full name", "type": "string", "description": "Your full, legal name"},
                "check": {"type": "boolean", "description": "Agree to the terms"},
                "integer": {"type": "integer", "minimum": 1, "maximum": 100, "default": 42},
                "hero": {"type": "string", "oneOf": [
                    {"const": "hero-1", "title": "Superman"},
                    {"const": "hero-2", "title": "Wonder Woman"}
                ]},
                "fish": {"type": "array", "maxItems": 2, "items": {"enum": ["Tuna", "Salmon", "Trout"]}}
            },
            "required": ["name"]
        });
        FormQuestion {
            id: "form-1".into(),
            server: "every".into(),
            message: "Please provide inputs for the following fields:".into(),
            schema_json: schema.to_string(),
            url: String::new(),
        }
    }

    #[test]
    fn a_url_request_shows_the_page_to_open() {
        let t = Theme::plain();
        let mut r = request();
        r.message = "Sign in to continue".into();
        r.url = "https://example.com/login\u{1b}[2J".into();
        let shown = url_header(&t, &r);
        assert!(shown.contains("MCP server `every` asks you to open a page"));
        assert!(shown.contains("  Sign in to continue\n"));
        assert!(shown.contains("https://example.com/login") && !shown.contains('\u{1b}'));
    }

    fn form() -> Form {
        Form::from_schema(&serde_json::from_str(&request().schema_json).unwrap()).unwrap()
    }

    #[test]
    fn the_form_renders_every_field_with_type_marks_and_choices() {
        let t = Theme::plain();
        let form = form();
        let mut shown = header(&t, &request(), &form);
        shown.push_str(OPEN_PROMPT);
        shown.push_str("a\n");
        for field in &form.fields {
            shown.push_str(&field_lines(&t, field));
            shown.push_str(&field_prompt(field));
            shown.push_str(&field.default_text());
            shown.push('\n');
        }
        let values = json!({"name": "Ada", "integer": 42, "hero": "hero-2"});
        shown.push_str(&summary(&t, &form, values.as_object().unwrap()));
        shown.push_str(SEND_PROMPT);
        shown.push_str("y\n");
        shown.push_str(&outcome(&t, Choice::Go, "every"));
        insta::assert_snapshot!(shown);
    }

    #[test]
    fn questions_take_letters_and_words() {
        assert_eq!(parse_open("a"), Some(Choice::Go));
        assert_eq!(parse_open(" Decline "), Some(Choice::Decline));
        assert_eq!(parse_open("c"), Some(Choice::Cancel));
        assert_eq!(parse_open("later"), None);
        assert_eq!(parse_send("y"), Some(Choice::Go));
        assert_eq!(parse_send("d"), Some(Choice::Decline));
        assert_eq!(parse_send(""), None);
    }

    #[test]
    fn server_text_cannot_move_the_cursor() {
        let mut r = request();
        r.server = "evil\x1b[2J".into();
        r.message = "hi\x1b]0;title\x07 there".into();
        let shown = header(&Theme::plain(), &r, &form());
        assert!(!shown.contains('\x1b'), "{shown:?}");
    }
}
