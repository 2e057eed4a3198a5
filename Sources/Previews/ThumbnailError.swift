/// Why no thumbnail was made, by a program or an image library. It knows no HTTP: the server answers each
/// with the file's icon (415).
public struct ThumbnailError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is.
    public enum Reason: Sendable, Hashable {
        /// The program for this kind is not installed.
        case programMissing
        /// The program or the decode used more than its CPU-time limit, and
        /// was stopped: the file costs more than a thumbnail may.
        case timedOut
        /// The program or the decode ran past its time on the clock without
        /// using up its CPU time (a busy machine, a read that waits, a program
        /// that sleeps), and was stopped: that says nothing sure about the
        /// file, so it is tried again when next asked for.
        case tookTooLong
        /// The program failed (a corrupt or hostile file, a memory limit hit).
        case failed
        /// The file declares more than a thumbnail may cost (pixels, memory,
        /// decoding work, bytes): refused before it is decoded.
        case tooCostly
        /// The program wrote no image, or a larger one than allowed; an
        /// archive has no image to show.
        case noImage
        /// The image library for this kind is not installed.
        case libraryMissing
        /// No thumbnail is made for this kind of file.
        case notThisKind
        /// The file is still being written: its thumbnail comes once it is finished.
        case unfinished
    }

    public var reason: Reason
    /// For a person: what happened and, where there is one, the fix.
    public var message: String

    public init(_ reason: Reason, _ message: String) {
        self.reason = reason
        self.message = message
    }

    public var description: String { message }
}

/// How many times its CPU-time limit a decode or a program run may last on
/// the clock before it is stopped anyway: for work that waits rather than
/// works (a slow read, a hung program), with room for a loaded machine.
let clockTimesCPULimit = 6
