import CImageThumbnail

#if canImport(Glibc)
    import Glibc
#endif

/// The image libraries this process loaded at run time (dlopen), each
/// `nil` where the machine lacks it. Their loaded functions are immutable
/// and every decode makes its own library state, so one set serves any
/// number of threads at once.
package final class ImageLibraries: @unchecked Sendable {
    /// The file names tried for each library, in turn: Debian's sonames
    /// first, then the unversioned names and Homebrew's.
    package struct Names: Sendable {
        package var png = ["libpng16.so.16", "libpng16.so", "libpng16.16.dylib"]
        package var webp = ["libwebp.so.7", "libwebp.so.6", "libwebp.so", "libwebp.7.dylib"]
        package var gif = ["libgif.so.7", "libgif.so", "libgif.7.dylib"]
        package var heif = ["libheif.so.1", "libheif.so", "libheif.1.dylib"]
        package var zlib = ["libz.so.1", "libz.so", "libz.1.dylib"]
        package var jpeg = JPEGCodec.libraryNames

        package init() {}

        /// Names no machine has: every library missing.
        package static let none: Names = {
            var names = Names()
            names.png = ["libfileshare-missing-png.so"]
            names.webp = ["libfileshare-missing-webp.so"]
            names.gif = ["libfileshare-missing-gif.so"]
            names.heif = ["libfileshare-missing-heif.so"]
            names.zlib = ["libfileshare-missing-z.so"]
            names.jpeg = ["libfileshare-missing-turbojpeg.so"]
            return names
        }()
    }

    let png: OpaquePointer?
    let webp: OpaquePointer?
    let gif: OpaquePointer?
    let heif: OpaquePointer?
    let zlib: OpaquePointer?
    let jpeg: JPEGCodec?
    /// For each library missing, the dynamic linker's reasons.
    package let missing: [String: String]

    package init(names: Names = Names()) {
        var missing: [String: String] = [:]
        typealias Open = (UnsafePointer<CChar>?, UnsafeMutablePointer<CChar>?, Int) -> OpaquePointer?
        func load(_ label: String, _ names: [String], _ open: Open) -> OpaquePointer? {
            var reasons: [String] = []
            for name in names {
                var message = [CChar](repeating: 0, count: 512)
                if let library = open(name, &message, message.count) { return library }
                reasons.append(
                    String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
            }
            missing[label] = reasons.joined(separator: "; ")
            return nil
        }
        png = load("libpng16", names.png, cit_png_open)
        webp = load("libwebp", names.webp, cit_webp_open)
        gif = load("giflib", names.gif, cit_gif_open)
        heif = load("libheif", names.heif, cit_heif_open)
        zlib = load("zlib", names.zlib, cit_zlib_open)
        switch names.jpeg == JPEGCodec.libraryNames ? JPEGCodec.loaded : JPEGCodec.load(names.jpeg) {
        case .success(let codec): jpeg = codec
        case .failure(let unavailable):
            jpeg = nil
            missing["libturbojpeg"] = unavailable.description
        }
        self.missing = missing
    }

    deinit {
        for library in [png, webp, gif, heif, zlib] { cit_library_close(library) }
    }

    /// The process's libraries, loaded on first use.
    package static let shared = ImageLibraries()

    /// The kinds these libraries make thumbnails of. Every thumbnail is
    /// written as a JPEG, so each kind needs libturbojpeg too; comics and
    /// books need zlib (their pages are inflated) and a library for the
    /// image inside (any one: their pages are usually JPEG).
    package var kinds: [ImageKind] {
        guard jpeg != nil else { return [] }
        var kinds: [ImageKind] = [.jpeg]
        if png != nil { kinds.append(.png) }
        if webp != nil { kinds.append(.webp) }
        if gif != nil { kinds.append(.gif) }
        if heif != nil { kinds.append(.heif) }
        if zlib != nil { kinds += [.cbz, .epub] }
        return kinds
    }
}
