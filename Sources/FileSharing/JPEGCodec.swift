import CJPEGThumbnail
import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// JPEG thumbnails made by libjpeg-turbo's TurboJPEG library, loaded at run
/// time: the package builds with no JPEG header or library, and a machine
/// without `libturbojpeg` serves every thumbnail but the ones it would make
/// (a camera's embedded EXIF thumbnail needs no library).
///
/// The loaded functions are immutable and each call makes its own TurboJPEG
/// handles, so one codec serves any number of threads at once.
final class JPEGCodec: @unchecked Sendable {
    /// The library names tried in turn: Linux distributions' sonames, then
    /// the unversioned name and Homebrew's.
    static let libraryNames = ["libturbojpeg.so.0", "libturbojpeg.so", "libturbojpeg.0.dylib", "libturbojpeg.dylib"]

    /// The environment variable that names the library to load instead (a
    /// path or a name): for a library outside the linker's search path.
    static let libraryVariable = "FILESHARE_LIBTURBOJPEG"

    /// Where to get the library, said when it is missing.
    static let installHint =
        "JPEG thumbnails other than a camera's embedded one need libjpeg-turbo's TurboJPEG library "
        + "(Debian and Ubuntu: libturbojpeg0; Fedora: turbojpeg; Homebrew: jpeg-turbo)"

    /// The library that was loaded, as it was named.
    let library: String
    private let codec: OpaquePointer

    private init(library: String, codec: OpaquePointer) {
        self.library = library
        self.codec = codec
    }

    deinit { cjt_codec_close(codec) }

    /// Loads the first of `names` that the dynamic linker finds with every
    /// function used here.
    ///
    /// - Returns: The codec, or why none of the names could be loaded.
    static func load(_ names: [String]) -> Result<JPEGCodec, Unavailable> {
        var reasons: [String] = []
        for name in names {
            var message = [CChar](repeating: 0, count: 512)
            if let codec = cjt_codec_open(name, &message, message.count) {
                return .success(JPEGCodec(library: name, codec: codec))
            }
            reasons.append(String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return .failure(Unavailable(reasons: reasons))
    }

    /// The process's codec, loaded on first use from `FILESHARE_LIBTURBOJPEG`
    /// when it is set, else from ``libraryNames``.
    static let loaded: Result<JPEGCodec, Unavailable> = {
        if let chosen = getenv(libraryVariable).map({ String(cString: $0) }), !chosen.isEmpty {
            return load([chosen])
        }
        return load(libraryNames)
    }()

    private static let reported = Atomic<Bool>(false)

    /// The process's codec, or `nil` without the library. The first call in
    /// the process logs which library was loaded, or which package adds it.
    static func shared(logger: Logger) -> JPEGCodec? {
        let result = loaded
        if !reported.exchange(true, ordering: .relaxed) {
            switch result {
            case .success(let codec):
                logger.info("JPEG thumbnails are made with \(codec.library)")
            case .failure(let unavailable):
                logger.warning("\(installHint): \(unavailable)")
            }
        }
        return try? result.get()
    }

    /// A thumbnail of the JPEG open at `fd` whose longer side is at most
    /// about `maxSide` pixels (up to twice that, the image being decoded at
    /// 1/2, 1/4 or 1/8 scale), encoded at quality 80; `nil` when the file is
    /// not a JPEG the library decodes to RGB or grey, or is over 64 MiB.
    func thumbnail(fd: Int32, maxSide: Int) -> [UInt8]? {
        var out: UnsafeMutablePointer<UInt8>? = nil
        var size: UInt = 0
        guard cjt_thumbnail(codec, fd, Int32(clamping: maxSide), &out, &size) == 0, let out else { return nil }
        defer { free(out) }
        return Array(UnsafeBufferPointer(start: out, count: Int(size)))
    }

    /// RGB pixels (3 bytes each, rows top to bottom) encoded as a JPEG.
    func encode(rgb pixels: [UInt8], width: Int, height: Int, quality: Int) -> [UInt8]? {
        guard width > 0, height > 0, pixels.count >= width * height * 3 else { return nil }
        var out: UnsafeMutablePointer<UInt8>? = nil
        var size: UInt = 0
        let status = cjt_encode_rgb(codec, pixels, UInt32(width), UInt32(height), Int32(quality), &out, &size)
        guard status == 0, let out else { return nil }
        defer { free(out) }
        return Array(UnsafeBufferPointer(start: out, count: Int(size)))
    }

    /// Why no library could be loaded: the dynamic linker's reason for each name.
    struct Unavailable: Error, CustomStringConvertible {
        let reasons: [String]
        var description: String { reasons.joined(separator: "; ") }
    }
}
