import FileWatching

/// Runs blocking disk work off the cooperative pool (FileWatching's
/// `runBlocking`, the package's one way off it), keeping its typed error.
func blockingResult<T: Sendable>(_ work: @escaping @Sendable () throws(DocumentsError) -> T) async
    -> Result<T, DocumentsError>
{
    await runBlocking {
        do throws(DocumentsError) { return .success(try work()) } catch { return .failure(error) }
    }
}

/// ``blockingResult(_:)``, throwing its error.
func blocking<T: Sendable>(_ work: @escaping @Sendable () throws(DocumentsError) -> T) async throws(DocumentsError)
    -> T
{
    try await blockingResult(work).get()
}
