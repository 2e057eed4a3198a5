/// The web page's files (HTML, CSS, JavaScript), embedded as strings so the server needs no resource bundle.
enum WebAssets {}
