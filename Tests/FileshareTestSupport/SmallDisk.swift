#if canImport(Glibc)
    import Glibc
#endif

/// A tmpfs of a few bytes mounted for one test (a disk that fills up), and
/// taken away on every way out: unmounted lazily (`MNT_DETACH`), so a
/// descriptor or a watch the test's objects still hold cannot keep it
/// mounted; then its folder removed. (Left mounted, such disks pile up in
/// `/proc/mounts` — which once grew past what other tests read of it.)
/// Needs root; `nil` with the reason when it cannot be mounted.
public enum SmallDisk {
    /// Runs `body` with the mount point of a new tmpfs of `size` (as mount(8) takes it, e.g. "1m").
    public static func with<T>(size: String, _ body: (String) async throws -> T) async throws -> T? {
        var template = Array("\(TemporaryFolder.systemPath)/fileshare-disk-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else { return nil }
        let point = String(cString: made)
        guard mount("tmpfs", point, "tmpfs", 0, "size=\(size)") == 0 else {
            rmdir(point)
            return nil
        }
        defer {
            umount2(point, Int32(MNT_DETACH))
            rmdir(point)
        }
        return try await body(point)
    }
}
