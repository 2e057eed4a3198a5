import Accounts
import Hummingbird

/// The pages a share link shows (``LinkFace``), made here: small, with the
/// page's stylesheet, and `shares.js` only for the drop zone. Every name
/// is escaped; the security policy allows nothing from elsewhere.
enum LinkPages {
    struct Entry {
        var name: String
        var isFolder: Bool
        var size: Int64
    }

    static func escape(_ text: String) -> String {
        text.replacing("&", with: "&amp;").replacing("<", with: "&lt;").replacing(">", with: "&gt;")
            .replacing("\"", with: "&quot;").replacing("'", with: "&#39;")
    }

    /// A path's names, each percent-encoded, joined by `/`.
    static func encode(_ names: [String]) -> String {
        names.map { name in
            var out = ""
            for byte in name.utf8 {
                let plain =
                    (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
                    || byte == UInt8(ascii: "~")
                if plain {
                    out.unicodeScalars.append(Unicode.Scalar(byte))
                } else {
                    out += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
                }
            }
            return out
        }.joined(separator: "/")
    }

    static func size(_ bytes: Int64) -> String {
        let units = ["bytes", "KB", "MB", "GB", "TB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1000, unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        return unit == 0
            ? "\(bytes) bytes"
            : String(Int((value * 10).rounded()) / 10) + "." + String(Int((value * 10).rounded()) % 10) + " "
                + units[unit]
    }

    static func document(title: String, body: String, status: HTTPResponse.Status = .ok, script: Bool = false)
        -> Response
    {
        let html = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta name="referrer" content="no-referrer">
            <title>\(escape(title))</title>
            <link rel="stylesheet" href="/s/assets/app.css">
            \(script ? "<script src=\"/s/assets/shares.js\" defer></script>" : "")
            </head><body class="link-page"><main>
            \(body)
            </main></body></html>
            """
        var response = PageFace.asset(html, type: "text/html; charset=utf-8")
        response.status = status
        response.headers[.cacheControl] = "no-store"
        response.headers[.contentSecurityPolicy] =
            "default-src 'none'; style-src 'self'; img-src 'self'; media-src 'self'; script-src 'self'; "
            + "connect-src 'self'; form-action 'self'; frame-ancestors 'none'"
        return response
    }

    /// A read link's file: its preview when the browser can show it, and the download.
    static func file(base: String, name: String, size: Int64, link: ShareLink) -> Response {
        let type = FileResponses.mediaType(for: name)
        var preview = ""
        if type.hasPrefix("image/") && !type.contains("svg") {
            preview = "<img class=\"link-preview\" src=\"\(base)/download\" alt=\"\(escape(name))\">"
        } else if type.hasPrefix("video/") {
            preview = "<video class=\"link-preview\" src=\"\(base)/download\" controls></video>"
        } else if type.hasPrefix("audio/") {
            preview = "<audio src=\"\(base)/download\" controls></audio>"
        }
        return document(
            title: name,
            body: """
                <h1>\(escape(name))</h1>
                <p>\(self.size(size))\(limits(link))</p>
                \(preview)
                <p><a class="button" href="\(base)/download?download=1" download>Download</a></p>
                """)
    }

    /// A read link's folder, at `relative` inside it.
    static func folder(base: String, title: String, relative: [String], items: [Entry], link: ShareLink) -> Response {
        let here = relative.isEmpty ? "" : "/" + encode(relative)
        var crumbs = "<a href=\"\(base)\">\(escape(title))</a>"
        for index in relative.indices {
            crumbs +=
                " / <a href=\"\(base)/page/\(encode(Array(relative[...index])))\">\(escape(relative[index]))</a>"
        }
        var rows = ""
        for item in items {
            let target = encode(relative + [item.name])
            if item.isFolder {
                rows += "<li class=\"folder\"><a href=\"\(base)/page/\(target)\">\(escape(item.name))/</a></li>\n"
            } else {
                rows +=
                    "<li class=\"file\"><a href=\"\(base)/download/\(target)\">\(escape(item.name))</a> "
                    + "<span class=\"size\">\(size(item.size))</span> "
                    + "<a href=\"\(base)/download/\(target)?download=1\" download>download</a></li>\n"
            }
        }
        if items.isEmpty { rows = "<li class=\"empty\">This folder is empty.</li>" }
        return document(
            title: title,
            body: """
                <h1>\(crumbs)</h1>
                <p>\(limits(link).dropFirst(2))</p>
                <p><a class="button" href="\(base)/zip\(here)">Download all (ZIP)</a></p>
                <ul class="link-items">
                \(rows)
                </ul>
                """)
    }

    /// An upload link's drop zone: nothing of what the folder holds.
    static func dropZone(base: String, name: String) -> Response {
        document(
            title: "Send files",
            body: """
                <h1>Send files to “\(escape(name))”</h1>
                <p>Files sent here are added to the folder. What it holds is not shown; a name already taken is refused.</p>
                <div id="drop-zone" class="drop-zone" data-upload="\(base)/files/">
                <p>Drop files here, or</p>
                <input id="drop-input" type="file" multiple aria-label="Choose files">
                </div>
                <ul id="drop-results" class="link-items" aria-live="polite"></ul>
                """,
            script: true)
    }

    /// The password form (401), with `message` told above it.
    static func password(base: String, message: String?, status: HTTPResponse.Status) -> Response {
        document(
            title: "Password",
            body: """
                <h1>This link has a password</h1>
                \(message.map { "<p class=\"field-error\" role=\"alert\">\(escape($0))</p>" } ?? "")
                <form method="post" action="\(base)/password">
                <label>Password <input type="password" name="password" autocomplete="off" autofocus required></label>
                <button type="submit">Open</button>
                </form>
                """,
            status: status)
    }

    /// 410: the link has ended, and why.
    static func gone(_ ending: ShareLink.Ending) -> Response {
        let why =
            switch ending {
            case .expired: "This link has expired."
            case .revoked: "This link was revoked by the person who shared it."
            case .usedUp: "This link has been used as many times as it allows."
            case .deleted: "What this link shared has been deleted."
            }
        var response = document(
            title: "Link ended",
            body: "<h1>Link ended</h1>\n<p class=\"link-ended\" data-ending=\"\(ending.rawValue)\">\(why)</p>",
            status: .gone)
        response.headers[.init("X-Link-Ended")!] = ending.rawValue
        return response
    }

    /// 404: no such link (or no such page of it).
    static func notFound() -> Response {
        document(
            title: "No such link", body: "<h1>No such link</h1><p>Check the address you were given.</p>",
            status: .notFound)
    }

    /// 429: too many wrong tokens or passwords from this address.
    static func tooMany(_ wait: Duration) -> Response {
        let seconds = UsersAuthMiddleware.seconds(wait)
        var response = document(
            title: "Too many attempts",
            body: "<h1>Too many attempts</h1><p>Try again in \(seconds) seconds.</p>", status: .tooManyRequests)
        response.headers[.retryAfter] = String(seconds)
        return response
    }

    private static func limits(_ link: ShareLink) -> String {
        var parts: [String] = []
        if let expires = link.expires { parts.append("until " + SharesAPIFace.time(expires)) }
        if let max = link.maxDownloads { parts.append("\(max - link.downloads) of \(max) downloads left") }
        return parts.isEmpty ? "" : " · " + parts.joined(separator: ", ")
    }
}
