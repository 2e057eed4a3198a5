import Accounts
import ChangeLog
import FileWatching
import Foundation
import Hummingbird

/// The pages a share link shows (``LinkFace``), made here: small, with the
/// page's stylesheet, and `shares.js` for the drop zone and to show when a
/// link ends in the visitor's own time. Every name is escaped; the
/// security policy allows nothing from elsewhere.
enum LinkPages {
    struct Entry {
        var name: String
        var isFolder: Bool
        var size: Int64
        /// Whether the server makes a small image of it (shown beside its name).
        var hasThumbnail = false

        /// Whether `self` is listed before `other`: folders first, then by
        /// name as the page sorts (case aside, numbers by value: `IMG_2` before `IMG_10`).
        func precedes(_ other: Entry) -> Bool {
            if isFolder != other.isFolder { return isFolder }
            let order = name.compare(other.name, options: [.caseInsensitive, .numeric])
            return order == .orderedSame ? name < other.name : order == .orderedAscending
        }
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

    /// A size as the page writes it (`formatSize` in app.js): `512 bytes`, `1.5 kB`, `23 MB`.
    static func size(_ bytes: Int64) -> String {
        if bytes < 1000 { return bytes == 1 ? "1 byte" : "\(bytes) bytes" }
        let units = ["kB", "MB", "GB", "TB", "PB"]
        var value = Double(bytes)
        var unit = -1
        repeat {
            value /= 1000
            unit += 1
        } while value >= 999.5 && unit < units.count - 1
        if value < 10 {
            let tenths = Int((value * 10).rounded())
            return "\(tenths / 10).\(tenths % 10) \(units[unit])"
        }
        return "\(Int(value.rounded())) \(units[unit])"
    }

    static func document(title: String, body: String, status: HTTPResponse.Status = .ok, script: Bool = false)
        -> Response
    {
        let html = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta name="referrer" content="no-referrer">
            <title>\(HTMLText.escaped(title))</title>
            <link rel="stylesheet" href="/s/assets/app.css">
            \(script ? "<script src=\"/s/assets/shares.js\" defer></script>" : "")
            </head><body class="link-page"><main>
            \(body)
            </main></body></html>
            """
        var response = PageFace.asset(html, type: "text/html; charset=utf-8")
        response.status = status
        response.headers[.cacheControl] = "no-store"
        response.headers[.contentSecurityPolicy] = contentSecurityPolicy
        return response
    }

    /// A read link's file: its preview when the browser can show it, and the download.
    ///
    /// The preview is no download: on a link without `maxDownloads` it is
    /// the file through `view`; on one that counts, a scaled image through
    /// `thumbnail` (where this server makes one), and no player, so that
    /// looking spends nothing and no viewer is a free downloader.
    static func file(base: String, name: String, size: Int64, link: ShareLink, thumbnail: Bool) -> Response {
        let type = FileResponses.mediaType(for: name)
        let counts = link.maxDownloads != nil
        var preview = ""
        if type.hasPrefix("image/") && !type.contains("svg") && !counts {
            preview = "<img class=\"link-preview\" src=\"\(base)/view\" alt=\"\(HTMLText.escaped(name))\">"
        } else if counts && thumbnail {
            preview = "<img class=\"link-preview\" src=\"\(base)/thumbnail\" alt=\"\(HTMLText.escaped(name))\">"
        } else if type.hasPrefix("video/") && !counts {
            preview = "<video class=\"link-preview\" src=\"\(base)/view\" controls></video>"
        } else if type.hasPrefix("audio/") && !counts {
            preview = "<audio src=\"\(base)/view\" controls></audio>"
        }
        return document(
            title: name,
            body: """
                <h1>\(HTMLText.escaped(name))</h1>
                <p>\(self.size(size))\(limits(link))</p>
                \(preview)
                <p><a class="button primary link-download" href="\(base)/download?download=1" download>Download</a></p>
                """, script: link.expires != nil)
    }

    /// What a link's page may load and do: its own scripts and styles,
    /// nothing from elsewhere, no inline script.
    static let contentSecurityPolicy =
        "default-src 'none'; style-src 'self'; img-src 'self'; media-src 'self'; script-src 'self'; "
        + "connect-src 'self'; form-action 'self'; frame-ancestors 'none'"

    /// The policy of a read link's folder page: ``contentSecurityPolicy``,
    /// and the viewer's comic pages (images the browser makes from the
    /// file's bytes, `blob:`) and PDFs (the link's own `view`, framed).
    static let folderContentSecurityPolicy =
        "default-src 'none'; style-src 'self'; img-src 'self' blob:; media-src 'self'; script-src 'self'; "
        + "connect-src 'self'; frame-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

    /// A read link's folder (`link.html`): the web page's list, gallery and
    /// viewer, read-only. The scripts list and read through the link's
    /// addresses (`data-link`); a file is shown only where looking is free
    /// (`data-view`: a link without `maxDownloads`), else its thumbnail.
    /// - Parameters:
    ///   - base: `/s/TOKEN`.
    ///   - name: The name of the link's folder.
    ///   - link: The link (its end and downloads left are told).
    ///   - thumbnailKinds: The kinds this server makes thumbnails of, as `/api/info` names them.
    static func folderApp(base: String, name: String, link: ShareLink, thumbnailKinds: [String]) -> Response {
        let href = HTMLText.escaped(base)
        var body = "<body class=\"link-folder\" data-link=\"\(href)\" data-name=\"\(HTMLText.escaped(name))\""
        body += " data-thumbnails=\"\(HTMLText.escaped(thumbnailKinds.joined(separator: " ")))\""
        if link.maxDownloads == nil { body += " data-view=\"1\"" }
        let html = WebAssets.linkFolder
            .replacing("<body class=\"link-folder\">", with: body + ">")
            .replacing("<!--name-->", with: HTMLText.escaped(name))
            .replacing("<!--limits-->", with: "Shared with you to view and download" + limits(link))
            .replacing("<!--zip-->", with: href + "/zip")
            .replacing("<!--plain-->", with: href + "/page")
            .replacing("<!--base-->", with: href)
        var response = PageFace.page(html, policy: folderContentSecurityPolicy)
        response.headers[.cacheControl] = "no-store"
        return response
    }

    /// A read link's folder, at `relative` inside it, as a plain list (for a browser without scripts).
    static func folder(base: String, title: String, relative: [String], items: [Entry], link: ShareLink) -> Response {
        let here = relative.isEmpty ? "" : "/" + encode(relative)
        var crumbs = "<a href=\"\(base)\">\(HTMLText.escaped(title))</a>"
        for index in relative.indices {
            crumbs +=
                " / <a href=\"\(base)/page/\(encode(Array(relative[...index])))\">\(HTMLText.escaped(relative[index]))</a>"
        }
        var rows = ""
        for item in items {
            let target = encode(relative + [item.name])
            if item.isFolder {
                rows +=
                    "<li class=\"folder\"><a href=\"\(base)/page/\(target)\">\(HTMLText.escaped(item.name))/</a></li>\n"
            } else {
                // A small image is no download; the file itself is shown only
                // where looking is free (a link that counts downloads has its
                // Download alone, so that opening nothing spends one).
                let thumbnail =
                    item.hasThumbnail
                    ? "<img class=\"link-thumb\" src=\"\(base)/thumbnail/\(target)\" alt=\"\" loading=\"lazy\"> " : ""
                let name =
                    link.maxDownloads == nil
                    ? "<a href=\"\(base)/view/\(target)\">\(HTMLText.escaped(item.name))</a>"
                    : HTMLText.escaped(item.name)
                rows +=
                    "<li class=\"file\">\(thumbnail)\(name) "
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
                """, script: link.expires != nil)
    }

    /// An upload link's drop zone: nothing of what the folder holds.
    static func dropZone(base: String, name: String) -> Response {
        document(
            title: "Send files",
            body: """
                <h1>Send files to “\(HTMLText.escaped(name))”</h1>
                <p>Files sent here are added to the folder; what it holds is not shown. A file with the same name as one already there is kept beside it, numbered.</p>
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
                \(message.map { "<p class=\"field-error\" role=\"alert\">\(HTMLText.escaped($0))</p>" } ?? "")
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
        if let expires = link.expires {
            // Shown in the visitor's time zone by shares.js; without scripts, as a span of time.
            var time: [UInt8] = []
            CivilTime(nanoseconds: expires * 1_000_000_000).writeRFC3339(into: &time)
            let moment = String(decoding: time, as: UTF8.self)
            parts.append("<time datetime=\"\(moment)\" data-until>\(until(expires))</time>")
        }
        if let max = link.maxDownloads {
            let left = max - link.downloads
            parts.append(left == 1 ? "1 download left" : "\(left) downloads left")
        }
        return parts.isEmpty ? "" : " · " + parts.joined(separator: ", ")
    }

    /// How long a link stays open, in words that need no time zone: the
    /// visitor's clock is not the server's.
    /// - Parameters:
    ///   - expires: When the link ends, in seconds since the epoch.
    ///   - now: The time now, in seconds since the epoch.
    static func until(_ expires: Int64, now: Int64 = FileChangeLog.wallClock() / 1_000_000_000) -> String {
        let seconds = max(0, expires - now)
        let (count, unit): (Int64, String) =
            switch seconds {
            case ..<3600: (max(1, (seconds + 59) / 60), "minute")
            case ..<(2 * 86_400): ((seconds + 1799) / 3600, "hour")
            default: ((seconds + 43_199) / 86_400, "day")
            }
        return "open for \(count) more \(unit)\(count == 1 ? "" : "s")"
    }
}
