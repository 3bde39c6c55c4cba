//! A subscription's payment book (carnê) as a PDF: one A4 page per instalment, each with
//! a receipt stub the payer keeps and, below a cut line, the slip that is paid: a boleto
//! with its typed line and bar code, or a Pix charge with its QR code and its
//! copy-and-paste code.
//!
//! Only the 14 standard PDF fonts and filled or stroked rectangles are used: the text is
//! real text (selectable and searchable), nothing is embedded or fetched, and a page
//! weighs a few kilobytes. The standard fonts are WinAnsi-encoded, so Portuguese accents
//! come out right; a character outside WinAnsi is written as `?`.

use printpdf::{
    BuiltinFont, Color, Greyscale, Line, LineDashPattern, LinePoint, Mm, Op, PaintMode,
    PdfDocument, PdfFontHandle, PdfPage, PdfParseErrorSeverity, PdfSaveOptions, Point, Pt, Rect,
    TextItem,
};

/// A company or person on a slip.
#[derive(Clone, Debug)]
pub struct Party {
    pub name: String,
    /// CPF or CNPJ, already formatted (`11.222.333/0001-81`).
    pub tax_id: String,
}

/// How a slip is paid.
#[derive(Clone, Debug)]
pub enum SlipKind {
    /// A registered boleto: the formatted typed line (47 digits with dots/spaces), the
    /// 44-digit barcode, and its Interleaved 2 of 5 bars as module colours (true = bar;
    /// narrow = 1 module, wide = 3), computed by the caller.
    Boleto {
        typed_line: String,
        barcode: String,
        bars: Vec<bool>,
    },
    /// A Pix charge: its BR Code (copy-and-paste text), drawn as a QR code too.
    Pix { br_code: String },
}

/// One instalment of the book.
#[derive(Clone, Debug)]
pub struct Slip {
    /// Instalment number, from 1.
    pub number: u32,
    /// The company receiving.
    pub payee: Party,
    /// The customer.
    pub payer: Party,
    pub value_cents: i64,
    pub due_date: time::Date,
    /// e.g. "Assinatura mensal — parcela 3".
    pub description: String,
    pub kind: SlipKind,
}

#[derive(Debug, thiserror::Error)]
pub enum PaymentBookError {
    #[error("a payment book needs at least one slip")]
    Empty,
    #[error("slip {number}: {reason}")]
    InvalidSlip { number: u32, reason: &'static str },
    #[error("the payment book could not be drawn: {0}")]
    Render(String),
}

/// The book as PDF bytes: one A4 page per slip, in order, `title` on every page (e.g.
/// "Carnê — Empresa X").
pub fn render(title: &str, slips: &[Slip]) -> Result<Vec<u8>, PaymentBookError> {
    if slips.is_empty() {
        return Err(PaymentBookError::Empty);
    }
    let pages = slips
        .iter()
        .map(|slip| draw_page(title, slip).map(|c| PdfPage::new(Mm(PAGE_W), Mm(PAGE_H), c.ops)))
        .collect::<Result<Vec<_>, _>>()?;
    let mut warnings = Vec::new();
    let bytes = PdfDocument::new(title)
        .with_pages(pages)
        .save(&PdfSaveOptions::default(), &mut warnings);
    if let Some(error) = warnings
        .iter()
        .find(|w| w.severity == PdfParseErrorSeverity::Error)
    {
        return Err(PaymentBookError::Render(error.msg.clone()));
    }
    Ok(bytes)
}

/// `R$ 1.234,56`.
fn format_brl(cents: i64) -> String {
    let sign = if cents < 0 { "-" } else { "" };
    let cents = cents.unsigned_abs();
    let reais = (cents / 100).to_string();
    let mut grouped = String::new();
    for (i, digit) in reais.chars().enumerate() {
        if i > 0 && (reais.len() - i).is_multiple_of(3) {
            grouped.push('.');
        }
        grouped.push(digit);
    }
    format!("{sign}R$ {grouped},{:02}", cents % 100)
}

/// `DD/MM/YYYY`.
fn format_date(date: time::Date) -> String {
    format!(
        "{:02}/{:02}/{:04}",
        date.day(),
        u8::from(date.month()),
        date.year()
    )
}

// Layout, in millimetres from the top-left corner of an A4 portrait page.
const PAGE_W: f32 = 210.0;
const PAGE_H: f32 = 297.0;
const LEFT: f32 = 15.0;
const WIDTH: f32 = 180.0;
const RIGHT: f32 = LEFT + WIDTH;
/// Width of the right-hand column (due date, value, instalment).
const SIDE: f32 = 50.0;
/// Inner padding of a cell.
const PAD: f32 = 2.0;
const ROW: f32 = 11.0;
/// One bar-code module (a narrow bar or space).
const MODULE: f32 = 0.33;
const BAR_HEIGHT: f32 = 13.0;
/// Blank space either side of the bar code (at least ten modules).
const QUIET: f32 = 6.0;
const QR_SIZE: f32 = 50.0;

const LABEL: f32 = 6.5;
const VALUE: f32 = 10.0;
const BLACK: f32 = 0.0;
const GREY: f32 = 0.35;
const BAND: f32 = 0.92;

fn draw_page(title: &str, slip: &Slip) -> Result<Canvas, PaymentBookError> {
    let invalid = |reason| PaymentBookError::InvalidSlip {
        number: slip.number,
        reason,
    };
    if slip.value_cents < 0 {
        return Err(invalid("the value is negative"));
    }
    let payment = match &slip.kind {
        SlipKind::Boleto {
            typed_line, bars, ..
        } => {
            if typed_line.trim().is_empty() {
                return Err(invalid("the boleto has no typed line"));
            }
            if !bars.contains(&true) {
                return Err(invalid("the boleto has no bars"));
            }
            Payment::Boleto { typed_line, bars }
        }
        SlipKind::Pix { br_code } => {
            if br_code.trim().is_empty() {
                return Err(invalid("the Pix charge has no BR Code"));
            }
            let qr =
                qrcode::QrCode::with_error_correction_level(br_code.as_bytes(), qrcode::EcLevel::M)
                    .map_err(|e| PaymentBookError::Render(format!("slip {}: {e}", slip.number)))?;
            Payment::Pix { br_code, qr }
        }
    };

    let mut c = Canvas::default();
    c.ops.push(Op::SetOutlineThickness { pt: Pt(0.6) });
    c.ops.push(Op::SetOutlineColor { col: grey(BLACK) });

    // Page header.
    let parcela = format!("Parcela {}", slip.number);
    c.text_right(RIGHT, 20.0, BuiltinFont::HelveticaBold, 11.0, &parcela);
    let room = WIDTH - text_width(BuiltinFont::HelveticaBold, 11.0, &parcela) - 8.0;
    c.text(
        LEFT,
        20.0,
        BuiltinFont::HelveticaBold,
        14.0,
        &fit(BuiltinFont::HelveticaBold, 14.0, title, room),
    );
    c.rule(LEFT, RIGHT, 23.0);

    // The receipt stub the payer keeps.
    let mut y = band(&mut c, 29.0, "RECIBO DO PAGADOR", None);
    y = details(&mut c, slip, y);
    match &payment {
        Payment::Boleto { typed_line, .. } => {
            c.cell(LEFT, y, WIDTH, ROW, "Linha digitável");
            c.text(
                LEFT + PAD,
                y + 8.0,
                BuiltinFont::CourierBold,
                9.5,
                typed_line,
            );
        }
        Payment::Pix { .. } => {
            c.cell(LEFT, y, WIDTH, ROW, "Forma de pagamento");
            c.text(
                LEFT + PAD,
                y + 8.0,
                BuiltinFont::Helvetica,
                9.0,
                "Pix: QR Code ou código copia e cola na ficha abaixo",
            );
        }
    }
    y += ROW;

    // Cut line.
    y += 7.0;
    c.text_right(RIGHT, y - 1.2, BuiltinFont::Helvetica, LABEL, "Corte aqui");
    c.dashed_rule(LEFT, RIGHT, y);
    y += 6.0;

    // The slip that is paid.
    match payment {
        Payment::Boleto { typed_line, bars } => {
            y = band(&mut c, y, "BOLETO", Some(typed_line));
            y = details(&mut c, slip, y);
            c.cell(LEFT, y, WIDTH, ROW, "Local de pagamento");
            c.text(
                LEFT + PAD,
                y + 8.0,
                BuiltinFont::Helvetica,
                9.0,
                "Pagável em qualquer banco, lotérica ou aplicativo bancário até o vencimento",
            );
            y += ROW;
            let area = BAR_HEIGHT + 13.0;
            c.cell(LEFT, y, WIDTH, area, "");
            barcode(&mut c, bars, y + 4.0);
            c.text_right(
                RIGHT - PAD,
                y + area - 2.5,
                BuiltinFont::Helvetica,
                LABEL,
                "Autenticação mecânica — Ficha de compensação",
            );
        }
        Payment::Pix { br_code, qr } => {
            y = band(&mut c, y, "PIX", None);
            y = details(&mut c, slip, y);
            pix(&mut c, &qr, br_code, y);
        }
    }
    Ok(c)
}

/// A slip's way of payment, checked before it is drawn.
enum Payment<'a> {
    Boleto {
        typed_line: &'a str,
        bars: &'a [bool],
    },
    Pix {
        br_code: &'a str,
        qr: qrcode::QrCode,
    },
}

/// A shaded title band across the box, with an optional text on its right (the typed
/// line of a boleto); returns where the band ends.
fn band(c: &mut Canvas, top: f32, caption: &str, right: Option<&str>) -> f32 {
    let h = 8.0;
    c.fill_rect(LEFT, top, WIDTH, h, BAND);
    c.cell(LEFT, top, WIDTH, h, "");
    c.text(
        LEFT + PAD,
        top + 5.6,
        BuiltinFont::HelveticaBold,
        10.0,
        caption,
    );
    if let Some(right) = right {
        c.text_right(
            RIGHT - PAD,
            top + 5.8,
            BuiltinFont::CourierBold,
            11.0,
            right,
        );
    }
    top + h
}

/// Payee, payer, description and the due date, value and instalment beside them;
/// returns where the grid ends.
fn details(c: &mut Canvas, slip: &Slip, top: f32) -> f32 {
    let wide = WIDTH - SIDE;
    let side = LEFT + wide;
    let mut y = top;

    c.cell(LEFT, y, wide, ROW, "Beneficiário");
    c.party(LEFT, y, wide, &slip.payee);
    c.cell(side, y, SIDE, ROW, "Vencimento");
    c.text_right(
        RIGHT - PAD,
        y + 8.0,
        BuiltinFont::HelveticaBold,
        VALUE,
        &format_date(slip.due_date),
    );
    y += ROW;

    c.cell(LEFT, y, wide, ROW, "Pagador");
    c.party(LEFT, y, wide, &slip.payer);
    c.cell(side, y, SIDE, ROW, "Valor");
    c.text_right(
        RIGHT - PAD,
        y + 8.0,
        BuiltinFont::HelveticaBold,
        VALUE,
        &format_brl(slip.value_cents),
    );
    y += ROW;

    let h = ROW + 2.0;
    c.cell(LEFT, y, wide, h, "Descrição");
    let lines = wrap(
        BuiltinFont::Helvetica,
        8.5,
        &slip.description,
        wide - 2.0 * PAD,
        2,
    );
    for (i, line) in lines.iter().enumerate() {
        c.text(
            LEFT + PAD,
            y + 7.0 + 3.6 * i as f32,
            BuiltinFont::Helvetica,
            8.5,
            line,
        );
    }
    c.cell(side, y, SIDE, h, "Parcela");
    c.text_right(
        RIGHT - PAD,
        y + 8.0,
        BuiltinFont::HelveticaBold,
        VALUE,
        &slip.number.to_string(),
    );
    y + h
}

/// The Interleaved 2 of 5 bars, left-aligned after a quiet zone; each run of bar modules
/// is one filled rectangle.
fn barcode(c: &mut Canvas, bars: &[bool], top: f32) {
    let module = MODULE.min((WIDTH - 2.0 * QUIET) / bars.len() as f32);
    let x0 = LEFT + QUIET;
    let mut i = 0;
    while i < bars.len() {
        if bars[i] {
            let start = i;
            while i < bars.len() && bars[i] {
                i += 1;
            }
            let w = (i - start) as f32 * module;
            c.fill_rect(x0 + start as f32 * module, top, w, BAR_HEIGHT, BLACK);
        } else {
            i += 1;
        }
    }
}

/// The QR code on the left, the copy-and-paste code and how to pay on the right.
fn pix(c: &mut Canvas, qr: &qrcode::QrCode, br_code: &str, top: f32) {
    let text_x = LEFT + QR_SIZE + 12.0;
    let text_w = RIGHT - PAD - text_x;
    let size = 8.5;
    let per_line = ((text_w / text_width(BuiltinFont::Courier, size, "0")) as usize).max(1);
    let chars: Vec<char> = br_code.chars().collect();
    let lines: Vec<String> = chars.chunks(per_line).map(|l| l.iter().collect()).collect();

    let steps = [
        "1. Abra o aplicativo do seu banco e escolha pagar com Pix.",
        "2. Leia o QR Code ao lado ou cole o código Pix copia e cola.",
        "3. Confira o beneficiário e o valor antes de confirmar.",
    ];
    let text_h = 8.0 + 3.8 * lines.len() as f32 + 5.0 + 4.0 * steps.len() as f32;
    let area = (QR_SIZE + 12.0).max(text_h + 6.0);
    c.cell(LEFT, top, WIDTH, area, "");

    // The QR code, with its quiet zone inside the box's margin; each run of dark
    // modules in a row is one filled square strip.
    let n = qr.width();
    let module = QR_SIZE / n as f32;
    let (qx, qy) = (LEFT + 6.0, top + (area - QR_SIZE) / 2.0);
    let colors = qr.to_colors();
    for (row, cells) in colors.chunks(n).enumerate() {
        let mut col = 0;
        while col < n {
            if cells[col] == qrcode::Color::Dark {
                let start = col;
                while col < n && cells[col] == qrcode::Color::Dark {
                    col += 1;
                }
                c.fill_rect(
                    qx + start as f32 * module,
                    qy + row as f32 * module,
                    (col - start) as f32 * module,
                    module,
                    BLACK,
                );
            } else {
                col += 1;
            }
        }
    }

    let mut y = top + 8.0;
    c.text(
        text_x,
        y,
        BuiltinFont::HelveticaBold,
        VALUE,
        "Pix copia e cola",
    );
    for line in &lines {
        y += 3.8;
        c.text(text_x, y, BuiltinFont::Courier, size, line);
    }
    y += 5.0;
    for step in steps {
        y += 4.0;
        c.text(text_x, y, BuiltinFont::Helvetica, 8.0, step);
    }
}

/// Page operations, placed in millimetres from the top-left corner.
#[derive(Default)]
struct Canvas {
    ops: Vec<Op>,
}

impl Canvas {
    /// `text` with its baseline at `baseline`.
    fn text(&mut self, x: f32, baseline: f32, font: BuiltinFont, size: f32, text: &str) {
        self.ops.extend([
            Op::SetFillColor { col: grey(BLACK) },
            Op::StartTextSection,
            Op::SetFont {
                font: PdfFontHandle::Builtin(font),
                size: Pt(size),
            },
            Op::SetTextCursor {
                pos: Point::new(Mm(x), Mm(PAGE_H - baseline)),
            },
            Op::ShowText {
                items: vec![TextItem::Text(text.to_owned())],
            },
            Op::EndTextSection,
        ]);
    }

    fn text_right(&mut self, right: f32, baseline: f32, font: BuiltinFont, size: f32, text: &str) {
        self.text(
            right - text_width(font, size, text),
            baseline,
            font,
            size,
            text,
        );
    }

    /// A framed cell with a small grey label in its top-left corner.
    fn cell(&mut self, x: f32, top: f32, w: f32, h: f32, label: &str) {
        self.ops.push(Op::DrawRectangle {
            rectangle: rect(x, top, w, h, PaintMode::Stroke),
        });
        if !label.is_empty() {
            self.ops.extend([
                Op::SetFillColor { col: grey(GREY) },
                Op::StartTextSection,
                Op::SetFont {
                    font: PdfFontHandle::Builtin(BuiltinFont::Helvetica),
                    size: Pt(LABEL),
                },
                Op::SetTextCursor {
                    pos: Point::new(Mm(x + PAD), Mm(PAGE_H - top - 3.2)),
                },
                Op::ShowText {
                    items: vec![TextItem::Text(label.to_owned())],
                },
                Op::EndTextSection,
            ]);
        }
    }

    /// A party's name on the left of a cell and its tax id on the right.
    fn party(&mut self, x: f32, top: f32, w: f32, party: &Party) {
        let tax_id = tax_id_label(&party.tax_id);
        let tax_w = text_width(BuiltinFont::Helvetica, 8.5, &tax_id);
        self.text_right(x + w - PAD, top + 8.0, BuiltinFont::Helvetica, 8.5, &tax_id);
        let room = w - 2.0 * PAD - tax_w - 4.0;
        let name = fit(BuiltinFont::Helvetica, 9.5, &party.name, room);
        self.text(x + PAD, top + 8.0, BuiltinFont::Helvetica, 9.5, &name);
    }

    fn fill_rect(&mut self, x: f32, top: f32, w: f32, h: f32, shade: f32) {
        self.ops.extend([
            Op::SetFillColor { col: grey(shade) },
            Op::DrawRectangle {
                rectangle: rect(x, top, w, h, PaintMode::Fill),
            },
        ]);
    }

    fn rule(&mut self, from: f32, to: f32, y: f32) {
        self.ops.push(Op::DrawLine {
            line: Line {
                points: vec![point(from, y), point(to, y)],
                is_closed: false,
            },
        });
    }

    fn dashed_rule(&mut self, from: f32, to: f32, y: f32) {
        self.ops.push(Op::SetLineDashPattern {
            dash: LineDashPattern::new(0.0, &[4.0, 3.0]),
        });
        self.rule(from, to, y);
        self.ops.push(Op::SetLineDashPattern {
            dash: LineDashPattern::solid(),
        });
    }
}

fn grey(shade: f32) -> Color {
    Color::Greyscale(Greyscale::new(shade, None))
}

fn rect(x: f32, top: f32, w: f32, h: f32, mode: PaintMode) -> Rect {
    let mut r = Rect::from_xywh(
        Mm(x).into_pt(),
        Mm(PAGE_H - top - h).into_pt(),
        Mm(w).into_pt(),
        Mm(h).into_pt(),
    );
    r.mode = Some(mode);
    r
}

fn point(x: f32, y: f32) -> LinePoint {
    LinePoint {
        p: Point::new(Mm(x), Mm(PAGE_H - y)),
        bezier: false,
    }
}

/// `CNPJ 11.222.333/0001-81` or `CPF 123.456.789-09`, told apart by length.
fn tax_id_label(tax_id: &str) -> String {
    match tax_id.chars().filter(char::is_ascii_alphanumeric).count() {
        11 => format!("CPF {tax_id}"),
        14 => format!("CNPJ {tax_id}"),
        _ => tax_id.to_owned(),
    }
}

/// `text` cut with an ellipsis to at most `max` millimetres.
fn fit(font: BuiltinFont, size: f32, text: &str, max: f32) -> String {
    if text_width(font, size, text) <= max {
        return text.to_owned();
    }
    let mut cut: String = text.to_owned();
    while !cut.is_empty() && text_width(font, size, &format!("{cut}…")) > max {
        cut.pop();
    }
    format!("{}…", cut.trim_end())
}

/// `text` in at most `max_lines` lines of at most `width` millimetres, broken between
/// words; what does not fit ends in an ellipsis.
fn wrap(font: BuiltinFont, size: f32, text: &str, width: f32, max_lines: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut current = String::new();
    for word in text.split_whitespace() {
        let candidate = if current.is_empty() {
            word.to_owned()
        } else {
            format!("{current} {word}")
        };
        if current.is_empty() || text_width(font, size, &candidate) <= width {
            current = candidate;
        } else {
            lines.push(std::mem::replace(&mut current, word.to_owned()));
        }
    }
    if !current.is_empty() {
        lines.push(current);
    }
    if lines.len() > max_lines {
        let rest = lines.split_off(max_lines - 1).join(" ");
        lines.push(fit(font, size, &format!("{rest}…"), width));
    }
    lines
        .into_iter()
        .map(|line| fit(font, size, &line, width))
        .collect()
}

/// Width in millimetres of `text` set in `font` at `size` points, from the standard
/// fonts' metrics (Courier is monospaced; an accented letter is as wide as its base).
fn text_width(font: BuiltinFont, size: f32, text: &str) -> f32 {
    let units: u32 = text.chars().map(|c| u32::from(glyph_width(font, c))).sum();
    units as f32 / 1000.0 * size * 25.4 / 72.0
}

fn glyph_width(font: BuiltinFont, c: char) -> u16 {
    let table = match font {
        BuiltinFont::Courier
        | BuiltinFont::CourierBold
        | BuiltinFont::CourierOblique
        | BuiltinFont::CourierBoldOblique => return 600,
        BuiltinFont::HelveticaBold | BuiltinFont::HelveticaBoldOblique => &HELVETICA_BOLD,
        _ => &HELVETICA,
    };
    match base_letter(c) {
        c @ ' '..='~' => table[c as usize - 32],
        '—' | '…' => 1000,
        _ => 556,
    }
}

fn base_letter(c: char) -> char {
    match c {
        'À'..='Å' => 'A',
        'Ç' => 'C',
        'È'..='Ë' => 'E',
        'Ì'..='Ï' => 'I',
        'Ñ' => 'N',
        'Ò'..='Ö' => 'O',
        'Ù'..='Ü' => 'U',
        'Ý' => 'Y',
        'à'..='å' => 'a',
        'ç' => 'c',
        'è'..='ë' => 'e',
        'ì'..='ï' => 'i',
        'ñ' => 'n',
        'ò'..='ö' => 'o',
        'ù'..='ü' => 'u',
        'ý' | 'ÿ' => 'y',
        '–' => '-',
        _ => c,
    }
}

/// Advance widths of ' '..='~' in Helvetica, per 1000 units of the font size.
#[rustfmt::skip]
const HELVETICA: [u16; 95] = [
    278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278,
    556, 556, 556, 556, 556, 556, 556, 556, 556, 556, 278, 278, 584, 584, 584, 556,
    1015, 667, 667, 722, 722, 667, 611, 778, 722, 278, 500, 667, 556, 833, 722, 778,
    667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 278, 278, 278, 469, 556,
    333, 556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500, 222, 833, 556, 556,
    556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500, 334, 260, 334, 584,
];

/// Advance widths of ' '..='~' in Helvetica-Bold.
#[rustfmt::skip]
const HELVETICA_BOLD: [u16; 95] = [
    278, 333, 474, 556, 556, 889, 722, 238, 333, 333, 389, 584, 278, 333, 278, 278,
    556, 556, 556, 556, 556, 556, 556, 556, 556, 556, 333, 333, 584, 584, 584, 611,
    975, 722, 722, 722, 722, 667, 611, 778, 722, 278, 556, 722, 611, 833, 722, 778,
    667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 333, 278, 333, 584, 556,
    333, 556, 611, 556, 611, 556, 333, 611, 611, 278, 278, 556, 278, 889, 611, 611,
    611, 611, 389, 556, 333, 611, 556, 778, 556, 556, 500, 389, 280, 389, 584,
];

#[cfg(test)]
mod tests {
    use super::*;
    use lopdf::{Document, Object};
    use time::macros::date;

    const BR_CODE: &str = "00020126580014br.gov.bcb.pix0136123e4567-e12d3-a456-426614174000520400005303986540510.005802BR5913Fulano de Tal6008BRASILIA62070503***63041D3D";

    /// Interleaved 2 of 5 as module colours: start bar-space-bar-space, each pair of
    /// digits as five bars (the first) interleaved with five spaces (the second), stop
    /// wide bar, space, bar.
    fn i2of5(digits: &str) -> Vec<bool> {
        const WIDE: [[bool; 5]; 10] = [
            [false, false, true, true, false],
            [true, false, false, false, true],
            [false, true, false, false, true],
            [true, true, false, false, false],
            [false, false, true, false, true],
            [true, false, true, false, false],
            [false, true, true, false, false],
            [false, false, false, true, true],
            [true, false, false, true, false],
            [false, true, false, true, false],
        ];
        let mut bars = vec![true, false, true, false];
        let digits = digits.as_bytes();
        for pair in digits.chunks(2) {
            let (b, s) = (
                WIDE[usize::from(pair[0] - b'0')],
                WIDE[usize::from(pair[1] - b'0')],
            );
            for k in 0..5 {
                bars.extend(std::iter::repeat_n(true, if b[k] { 3 } else { 1 }));
                bars.extend(std::iter::repeat_n(false, if s[k] { 3 } else { 1 }));
            }
        }
        bars.extend([true, true, true, false, true]);
        bars
    }

    fn party(name: &str, tax_id: &str) -> Party {
        Party {
            name: name.into(),
            tax_id: tax_id.into(),
        }
    }

    fn boleto(
        number: u32,
        typed_line: &str,
        barcode: &str,
        value_cents: i64,
        due_date: time::Date,
    ) -> Slip {
        Slip {
            number,
            payee: party("Padaria Pão de Açúcar Ltda", "11.222.333/0001-81"),
            payer: party("Conceição Araújo Gonçalves", "123.456.789-09"),
            value_cents,
            due_date,
            description: format!("Assinatura mensal — parcela {number}"),
            kind: SlipKind::Boleto {
                typed_line: typed_line.into(),
                barcode: barcode.into(),
                bars: i2of5(barcode),
            },
        }
    }

    fn book() -> Vec<Slip> {
        vec![
            boleto(
                1,
                "34191.09008 63571.277308 71444.640008 5 97300000123456",
                "34195973000001234561090063571277307144464000",
                123_456,
                date!(2025 - 03 - 10),
            ),
            boleto(
                2,
                "34191.09008 63572.277305 71444.640008 8 97610000123456",
                "34198976100001234561090063572277307144464000",
                123_456,
                date!(2025 - 04 - 10),
            ),
            Slip {
                kind: SlipKind::Pix {
                    br_code: BR_CODE.into(),
                },
                description: "Assinatura mensal — parcela 3, com uma descrição longa o bastante \
                              para ocupar as duas linhas da célula de descrição do carnê"
                    .into(),
                ..boleto(
                    3,
                    "34191.09008 63573.277302 71444.640008 1 97920000001000",
                    "34191979200000010001090063573277307144464000",
                    1_000,
                    date!(2025 - 05 - 10),
                )
            },
        ]
    }

    fn render_book() -> Vec<u8> {
        let bytes = render("Carnê — Padaria Pão de Açúcar", &book()).unwrap();
        // PAYMENT_BOOK_PDF=/tmp/carne.pdf keeps the output to look at.
        if let Ok(path) = std::env::var("PAYMENT_BOOK_PDF") {
            std::fs::write(path, &bytes).unwrap();
        }
        bytes
    }

    #[test]
    fn one_page_per_slip_with_searchable_text() {
        let doc = Document::load_mem(&render_book()).unwrap();
        assert_eq!(doc.get_pages().len(), 3);

        let first = doc.extract_text(&[1]).unwrap();
        for expected in [
            "Carnê — Padaria Pão de Açúcar",
            "Parcela 1",
            "34191.09008 63571.277308 71444.640008 5 97300000123456",
            "Beneficiário",
            "Padaria Pão de Açúcar Ltda",
            "CNPJ 11.222.333/0001-81",
            "Pagador",
            "Conceição Araújo Gonçalves",
            "CPF 123.456.789-09",
            "Vencimento",
            "10/03/2025",
            "Valor",
            "R$ 1.234,56",
            "Assinatura mensal — parcela 1",
        ] {
            assert!(
                first.contains(expected),
                "page 1 lacks {expected:?}:\n{first}"
            );
        }

        let second = doc.extract_text(&[2]).unwrap();
        assert!(second.contains("34191.09008 63572.277305 71444.640008 8 97610000123456"));
        assert!(second.contains("Parcela 2") && second.contains("10/04/2025"));

        let third = doc.extract_text(&[3]).unwrap();
        assert!(third.contains("Pix copia e cola"), "{third}");
        assert!(
            third.contains("R$ 10,00") && third.contains("10/05/2025"),
            "{third}"
        );
        assert!(
            !third.contains(BR_CODE),
            "the BR Code is wrapped over lines"
        );
        assert!(third.replace('\n', "").contains(BR_CODE), "{third}");
    }

    #[test]
    fn only_text_and_vector_paths() {
        let doc = Document::load_mem(&render_book()).unwrap();
        let mut fonts = 0;
        for object in doc.objects.values() {
            let dict = match object {
                Object::Dictionary(d) => d,
                Object::Stream(s) => &s.dict,
                _ => continue,
            };
            let name = |key: &[u8]| {
                dict.get(key)
                    .and_then(Object::as_name)
                    .ok()
                    .map(<[u8]>::to_vec)
            };
            assert_ne!(
                name(b"Subtype"),
                Some(b"Image".to_vec()),
                "an image: {dict:?}"
            );
            assert!(!dict.has(b"FontFile") && !dict.has(b"FontFile2") && !dict.has(b"FontFile3"));
            if name(b"Type") == Some(b"Font".to_vec()) {
                fonts += 1;
                assert_eq!(name(b"Subtype"), Some(b"Type1".to_vec()), "{dict:?}");
                assert_eq!(
                    name(b"Encoding"),
                    Some(b"WinAnsiEncoding".to_vec()),
                    "{dict:?}"
                );
            }
        }
        assert!(
            fonts >= 3,
            "Helvetica, Helvetica-Bold and Courier-Bold at least"
        );
        for page in doc.get_pages().into_values() {
            let (resources, _) = doc.get_page_resources(page).unwrap();
            if let Some(resources) = resources {
                assert!(!resources.has(b"XObject"), "{resources:?}");
            }
        }
    }

    #[test]
    fn an_empty_book_is_refused() {
        assert!(matches!(render("Carnê", &[]), Err(PaymentBookError::Empty)));
    }

    #[test]
    fn a_slip_that_cannot_be_paid_is_refused() {
        let mut slips = book();
        slips[1].kind = SlipKind::Boleto {
            typed_line: "34191.09008 63572.277305 71444.640008 8 97610000123456".into(),
            barcode: "34198976100001234561090063572277307144464000".into(),
            bars: vec![false; 10],
        };
        assert!(matches!(
            render("Carnê", &slips),
            Err(PaymentBookError::InvalidSlip { number: 2, .. })
        ));
        let mut slips = book();
        slips[0].value_cents = -1;
        assert!(matches!(
            render("Carnê", &slips),
            Err(PaymentBookError::InvalidSlip { number: 1, .. })
        ));
    }

    #[test]
    fn money_and_dates_in_brazilian_format() {
        assert_eq!(format_brl(0), "R$ 0,00");
        assert_eq!(format_brl(5), "R$ 0,05");
        assert_eq!(format_brl(99_999), "R$ 999,99");
        assert_eq!(format_brl(123_456), "R$ 1.234,56");
        assert_eq!(format_brl(100_000_000), "R$ 1.000.000,00");
        assert_eq!(format_brl(-123_456), "-R$ 1.234,56");
        assert_eq!(format_date(date!(2025 - 03 - 09)), "09/03/2025");
    }

    #[test]
    fn long_text_is_cut_to_its_cell() {
        let name =
            "Companhia Brasileira de Distribuição e Comércio de Alimentos Integrados do Nordeste";
        let cut = fit(BuiltinFont::Helvetica, 9.5, name, 60.0);
        assert!(cut.ends_with('…') && text_width(BuiltinFont::Helvetica, 9.5, &cut) <= 60.0);
        let lines = wrap(
            BuiltinFont::Helvetica,
            8.5,
            &format!("{name} {name}"),
            60.0,
            2,
        );
        assert_eq!(lines.len(), 2);
        assert!(lines[1].ends_with('…'));
        assert!(
            lines
                .iter()
                .all(|l| text_width(BuiltinFont::Helvetica, 8.5, l) <= 60.0)
        );
    }
}
