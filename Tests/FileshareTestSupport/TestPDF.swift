/// PDF files made for tests, without a PDF library.
public enum TestPDF {
    /// A one-page PDF (300 × 400 points, a blue rectangle) with a correct
    /// cross-reference table, which poppler renders.
    public static func bytes() -> [UInt8] {
        let stream = "0 0 1 rg 50 50 200 300 re f"
        let objects = [
            "<</Type/Catalog/Pages 2 0 R>>", "<</Type/Pages/Kids[3 0 R]/Count 1>>",
            "<</Type/Page/Parent 2 0 R/MediaBox[0 0 300 400]/Contents 4 0 R/Resources<<>>>>",
            "<</Length \(stream.utf8.count)>>stream\n\(stream)\nendstream",
        ]
        var text = "%PDF-1.4\n"
        var offsets: [Int] = []
        for (index, object) in objects.enumerated() {
            offsets.append(text.utf8.count)
            text += "\(index + 1) 0 obj\n\(object)\nendobj\n"
        }
        let xref = text.utf8.count
        text += "xref\n0 \(objects.count + 1)\n0000000000 65535 f \n"
        for offset in offsets {
            text += String(repeating: "0", count: 10 - String(offset).count) + "\(offset) 00000 n \n"
        }
        text += "trailer\n<</Size \(objects.count + 1)/Root 1 0 R>>\nstartxref\n\(xref)\n%%EOF\n"
        return Array(text.utf8)
    }
}
