import CJPEGThumbnail

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
package final class JPEGCodec: @unchecked Sendable {
    /// The library names tried in turn: Linux distributions' sonames, then
    /// the unversioned name and Homebrew's.
    package static let libraryNames = [
        "libturbojpeg.so.0", "libturbojpeg.so", "libturbojpeg.0.dylib", "libturbojpeg.dylib",
    ]

    /// The environment variable that names the library to load instead (a
    /// path or a name): for a library outside the linker's search path.
    package static let libraryVariable = "FILESHARE_LIBTURBOJPEG"

    /// Where to get the library, said when it is missing.
    package static let installHint =
        "JPEG thumbnails other than a camera's embedded one need libjpeg-turbo's TurboJPEG library "
        + "(Debian and Ubuntu: libturbojpeg0; Fedora: turbojpeg; Homebrew: jpeg-turbo)"

    /// The library that was loaded, as it was named.
    package let library: String
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
    package static func load(_ names: [String]) -> Result<JPEGCodec, Unavailable> {
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
    package static let loaded: Result<JPEGCodec, Unavailable> = {
        if let chosen = getenv(libraryVariable).map({ String(cString: $0) }), !chosen.isEmpty {
            return load([chosen])
        }
        return load(libraryNames)
    }()

    /// The JPEG open at `fd` (or held in `bytes`) decoded to RGB at the
    /// smallest DCT scale (1/1 to 1/8) whose longer side is still at least
    /// `maxSide`: a 12-megapixel photo costs 1/64 of its pixels. Judged from
    /// its headers first: see ``Budget``.
    /// - Throws: ``ThumbnailError``: `tooCostly` for a file over a budget
    ///   (refused before decoding), `failed` for one that is not a JPEG the
    ///   library decodes to RGB.
    package func decode(fd: Int32, bytes: [UInt8]? = nil, maxSide: Int) throws(ThumbnailError) -> RGBImage {
        var pixels: UnsafeMutablePointer<UInt8>? = nil
        var width: Int32 = 0
        var height: Int32 = 0
        var frame = cjt_frame()
        let status: cjt_status
        if let bytes {
            status = bytes.withUnsafeBufferPointer {
                cjt_decode(
                    codec, -1, $0.baseAddress, UInt(bytes.count), Int32(clamping: maxSide), &pixels, &width, &height,
                    &frame)
            }
        } else {
            status = cjt_decode(codec, fd, nil, 0, Int32(clamping: maxSide), &pixels, &width, &height, &frame)
        }
        guard status == CJT_DECODED, let pixels else { throw JPEGCodec.refusal(status, frame) }
        defer { free(pixels) }
        let count = Int(width) * Int(height) * 3
        return RGBImage(
            pixels: Array(UnsafeBufferPointer(start: pixels, count: count)), width: Int(width), height: Int(height))
    }

    /// What a JPEG may cost to decode, checked from its headers before the
    /// library sees it (TurboJPEG 2.x can neither bound a decode's memory
    /// nor stop it on time): the numbers of `CJPEGThumbnail.h`.
    package enum Budget {
        /// The largest file, read whole into memory.
        package static let inputBytes = Int(CJT_MAX_INPUT)
        /// The most pixels a file may declare.
        package static let declaredPixels = Int(CJT_MAX_DECLARED_PIXELS)
        /// The most memory a decode may take besides the file: a progressive
        /// or multi-scan file's whole-image coefficient buffers, the scaled
        /// output and its rows.
        package static let memoryBytes = Int(CJT_MAX_MEMORY)
        /// The most scans.
        package static let scans = Int(CJT_MAX_SCANS)
        /// The most decoding work, in coefficients walked (about a nanosecond each).
        package static let work = UInt64(CJT_MAX_WORK)
    }

    /// Why a decode gave no picture, for a person.
    static func refusal(_ status: cjt_status, _ frame: cjt_frame) -> ThumbnailError {
        let kind = frame.progressive != 0 ? "progressive JPEG" : "JPEG"
        let size = "\(frame.width)×\(frame.height) pixels"
        func mebibytes(_ bytes: some BinaryInteger) -> String { "\((Int(bytes) + (1 << 20) - 1) >> 20) MiB" }
        switch status {
        case CJT_TOO_LARGE where frame.width == 0:
            return ThumbnailError(.tooCostly, "the JPEG is larger than \(mebibytes(Budget.inputBytes))")
        case CJT_TOO_LARGE:
            return ThumbnailError(
                .tooCostly,
                "the \(kind) declares \(size), more than the \(Budget.declaredPixels / 1_000_000) megapixels a thumbnail is made from"
            )
        case CJT_TOO_MUCH_MEMORY:
            return ThumbnailError(
                .tooCostly,
                "decoding this \(kind) of \(size) would take \(mebibytes(frame.memory)), more than the \(mebibytes(Budget.memoryBytes)) a thumbnail may"
            )
        case CJT_TOO_MUCH_WORK where Int(frame.scans) > Budget.scans:
            return ThumbnailError(
                .tooCostly, "the \(kind) has \(frame.scans) scans, more than the \(Budget.scans) a thumbnail may decode"
            )
        case CJT_TOO_MUCH_WORK:
            let times = (Double(frame.work) / Double(Budget.work) * 10).rounded(.up) / 10
            return ThumbnailError(
                .tooCostly,
                "decoding this \(kind) of \(size) in \(frame.scans) scans would take \(times) times the work a thumbnail may"
            )
        default:
            return ThumbnailError(.failed, "not a JPEG libturbojpeg can decode")
        }
    }

    /// RGB pixels (3 bytes each, rows top to bottom) encoded as a JPEG,
    /// baseline (a thumbnail) or progressive (a test's sample).
    package func encode(rgb pixels: [UInt8], width: Int, height: Int, quality: Int, progressive: Bool = false)
        -> [UInt8]?
    {
        guard width > 0, height > 0, pixels.count >= width * height * 3 else { return nil }
        var out: UnsafeMutablePointer<UInt8>? = nil
        var size: UInt = 0
        let status = cjt_encode_rgb(
            codec, pixels, UInt32(width), UInt32(height), Int32(quality), progressive ? 1 : 0, &out, &size)
        guard status == 0, let out else { return nil }
        defer { free(out) }
        return Array(UnsafeBufferPointer(start: out, count: Int(size)))
    }

    /// Why no library could be loaded: the dynamic linker's reason for each name.
    package struct Unavailable: Error, CustomStringConvertible {
        package let reasons: [String]
        package var description: String { reasons.joined(separator: "; ") }
    }
}
