"""Generate a folder holding every supported format, plus files that must be skipped."""

from __future__ import annotations

import io
import mailbox
import os
from email.message import EmailMessage
from pathlib import Path

GOOD = {
    "notes.txt", "latin1.txt", "guide.md", "manual.rst", "page.html", "report.pdf",
    "letter.docx", "mail.eml", "archive.mbox",
}
BAD = {"binary.txt", "empty.md", "corrupt.pdf", "encrypted.pdf", "huge.txt", "corrupt.docx",
       "photo.png"}


def make_pdf(pages: list[str]) -> bytes:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("helvetica", size=12)
    for text in pages:
        pdf.add_page()
        pdf.multi_cell(0, 8, text)
    return bytes(pdf.output())


def make_docx(path: Path) -> None:
    import docx

    d = docx.Document()
    d.add_heading("Tenancy letter", level=1)
    d.add_paragraph("The landlord confirms that the deposit of 900 euros was received.")
    d.add_heading("Repairs", level=2)
    d.add_paragraph("The boiler will be serviced every October by a licensed engineer.")
    table = d.add_table(rows=2, cols=2)
    table.cell(0, 0).text = "Rent"
    table.cell(0, 1).text = "750 euros"
    table.cell(1, 0).text = "Due"
    table.cell(1, 1).text = "first of the month"
    d.save(str(path))


def make_email(subject: str, sender: str, body: str, html: bool = False) -> EmailMessage:
    msg = EmailMessage()
    msg["Subject"] = subject
    msg["From"] = sender
    msg["To"] = "me@example.org"
    msg["Date"] = "Mon, 02 Mar 2026 10:00:00 +0000"
    if html:
        msg.set_content(f"<html><body><p>{body}</p></body></html>", subtype="html")
    else:
        msg.set_content(body)
    return msg


def make_corpus(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "notes.txt").write_text(
        "Grocery list for the weekend. Buy apples, bread and oat milk.\n\n"
        "The spare key is hidden under the blue flower pot by the back door.\n")
    (root / "latin1.txt").write_bytes(
        "Le café du coin ouvre à sept heures. Le propriétaire s'appelle René, "
        "il est très sympathique et il prépare un excellent café crème.".encode("cp1252"))
    (root / "guide.md").write_text(
        "# Garden guide\n\nTomatoes need six hours of sun a day.\n\n"
        "## Watering\n\nWater the tomatoes early in the morning. Never water the leaves.\n\n"
        "```\n# not a heading\n```\n\n## Pests\n\nAphids are controlled with soapy water.\n")
    (root / "manual.rst").write_text(
        "Bicycle manual\n==============\n\nThe bicycle has eleven gears.\n\n"
        "Brakes\n------\n\nThe brake pads should be replaced after 2000 kilometres.\n")
    (root / "page.html").write_text(
        "<html><head><title>Recipe page</title><script>var x = 'ignore me';</script></head>"
        "<body><h1>Pancakes</h1><p>Mix two eggs with <b>flour</b> and milk.</p>"
        "<h2>Cooking</h2><p>Fry each pancake for one minute per side.</p></body></html>")
    (root / "report.pdf").write_bytes(make_pdf([
        "Quarterly report. Revenue grew by twelve percent in the third quarter.",
        "Outlook. The company plans to open a second office in Lisbon next year.",
    ]))
    make_docx(root / "letter.docx")
    (root / "mail.eml").write_bytes(bytes(make_email(
        "Dentist appointment", "Clinic <clinic@example.org>",
        "Your dentist appointment is on Thursday at 3 pm. Please arrive early.")))
    box = mailbox.mbox(str(root / "archive.mbox"))
    box.add(make_email("Book club", "ana@example.org",
                       "The book club meets on Friday to discuss the novel Solaris."))
    box.add(make_email("Re: Book club", "ben@example.org",
                       "I will bring the cheese and the wine for the book club.", html=True))
    box.flush()
    box.close()
    # files that must be skipped, each with one warning
    (root / "binary.txt").write_bytes(os.urandom(2000) + b"\x00\x00")
    (root / "empty.md").write_bytes(b"")
    (root / "corrupt.pdf").write_bytes(b"%PDF-1.4\nthis is not really a pdf\n%%EOF")
    (root / "corrupt.docx").write_bytes(b"PK\x03\x04 definitely not a zip archive")
    (root / "huge.txt").write_text("word " * 60_000)
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter()
    for page in PdfReader(io.BytesIO(make_pdf(["Top secret payroll numbers."]))).pages:
        writer.add_page(page)
    writer.encrypt("hunter2", algorithm="AES-128")
    with open(root / "encrypted.pdf", "wb") as f:
        writer.write(f)
    # ignored or reported, never fatal
    (root / "photo.png").write_bytes(b"\x89PNG\r\n\x1a\n" + os.urandom(100))
    sub = root / "sub"
    sub.mkdir()
    (sub / "loop").symlink_to(root)
    (root / "dangling.md").symlink_to(root / "does-not-exist.md")
    return root
