# Writes annotations.ods: an OpenDocument spreadsheet (ODF 1.2 package,
# written by Python's zipfile as ODF lays it out: mimetype first and
# stored) whose cells carry comments (office:annotation) as LibreOffice
# Calc saves them: dc:creator, dc:date and text:p inside the cell, before
# its own paragraph; one on an empty cell, one of two paragraphs.
# Run from this folder: python3 make-annotations.py
import zipfile

content = """<?xml version="1.0" encoding="UTF-8"?>
<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"
 xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0"
 xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"
 xmlns:dc="http://purl.org/dc/elements/1.1/"
 xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0"
 xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0" office:version="1.2">
<office:body><office:spreadsheet>
<table:table table:name="Budget">
<table:table-column table:number-columns-repeated="3"/>
<table:table-row>
<table:table-cell office:value-type="string"><text:p>Item</text:p></table:table-cell>
<table:table-cell office:value-type="string"><text:p>Amount</text:p></table:table-cell>
<table:table-cell/>
</table:table-row>
<table:table-row>
<table:table-cell office:value-type="string"><text:p>Dredging</text:p></table:table-cell>
<table:table-cell office:value-type="float" office:value="120000">
<office:annotation draw:style-name="gr1" svg:width="2.5cm" svg:height="1cm" svg:x="5cm" svg:y="0cm">
<dc:creator>Marta Keller</dc:creator><dc:date>2024-03-04T00:00:00</dc:date>
<text:p>Quote from Harbour Works, valid until June.</text:p>
</office:annotation>
<text:p>120000</text:p></table:table-cell>
<table:table-cell/>
</table:table-row>
<table:table-row>
<table:table-cell office:value-type="string"><text:p>Pilot boat</text:p></table:table-cell>
<table:table-cell office:value-type="float" office:value="450000"><text:p>450000</text:p></table:table-cell>
<table:table-cell>
<office:annotation office:display="true">
<dc:date>2024-03-05T00:00:00</dc:date>
<text:p>Board approval pending;</text:p><text:p>second offer requested.</text:p>
</office:annotation>
</table:table-cell>
</table:table-row>
</table:table>
</office:spreadsheet></office:body></office:document-content>
"""
manifest = """<?xml version="1.0" encoding="UTF-8"?>
<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.2">
 <manifest:file-entry manifest:full-path="/" manifest:media-type="application/vnd.oasis.opendocument.spreadsheet"/>
 <manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/>
</manifest:manifest>
"""
with zipfile.ZipFile("annotations.ods", "w") as z:
    z.writestr(zipfile.ZipInfo("mimetype", (2024, 3, 4, 0, 0, 0)), "application/vnd.oasis.opendocument.spreadsheet", compress_type=zipfile.ZIP_STORED)
    for name, data in (("content.xml", content), ("META-INF/manifest.xml", manifest)):
        z.writestr(zipfile.ZipInfo(name, (2024, 3, 4, 0, 0, 0)), data, compress_type=zipfile.ZIP_DEFLATED)
