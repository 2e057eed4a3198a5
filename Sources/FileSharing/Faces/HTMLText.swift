/// Text put into the server's own HTML pages (sign-in, share links).
enum HTMLText {
    /// `text` made safe inside an element or an attribute quoted either way.
    static func escaped(_ text: String) -> String {
        text.replacing("&", with: "&amp;").replacing("<", with: "&lt;").replacing(">", with: "&gt;")
            .replacing("\"", with: "&quot;").replacing("'", with: "&#39;")
    }
}
