/// The OpenAPI document of the JSON API, served at `/api/openapi.json`. The
/// same text is kept in the repository as `openapi.json`; a test checks that
/// they agree.
enum OpenAPIDocument {
    static let json = #"""
{
  "openapi": "3.1.0",
  "info": {
    "title": "fileshare",
    "version": "1",
    "description": "The JSON API of `fileshare serve` (http-api.md). Paths in URLs are percent-encoded, `/`-separated and relative to the shared folder; `..`, encoded `/` or NUL in a name, hidden names and symbolic links leading out of the folder are refused (400 or 403). Every error answers {\"error\": \"...\"}."
  },
  "security": [{ "basic": [] }],
  "paths": {
    "/api/info": {
      "get": {
        "summary": "About the share",
        "responses": {
          "200": { "description": "The share", "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Info" } } } }
        }
      }
    },
    "/api/list": {
      "get": {
        "summary": "List a folder",
        "parameters": [{ "name": "path", "in": "query", "required": false, "schema": { "type": "string" }, "description": "The folder (empty: the root)" }],
        "responses": {
          "200": { "description": "The folder's items", "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Listing" } } } },
          "404": { "$ref": "#/components/responses/Error" }
        }
      }
    },
    "/api/files/{path}": {
      "parameters": [{ "name": "path", "in": "path", "required": true, "schema": { "type": "string" } }],
      "get": {
        "summary": "Download a file (ranges, ETag, Last-Modified, conditional requests)",
        "parameters": [
          { "name": "Range", "in": "header", "required": false, "schema": { "type": "string" } },
          { "name": "download", "in": "query", "required": false, "schema": { "type": "string" }, "description": "Any value: Content-Disposition attachment" }
        ],
        "responses": {
          "200": { "description": "The file", "content": { "application/octet-stream": {} } },
          "206": { "description": "A range of the file" },
          "304": { "description": "Not modified" },
          "404": { "$ref": "#/components/responses/Error" },
          "416": { "$ref": "#/components/responses/Error" }
        }
      },
      "head": { "summary": "The file's headers", "responses": { "200": { "description": "Headers only" }, "404": { "description": "Missing" } } },
      "put": {
        "summary": "Upload the body as the file, creating missing folders; visible only once complete",
        "requestBody": { "content": { "application/octet-stream": {} } },
        "responses": {
          "201": { "$ref": "#/components/responses/Path" },
          "200": { "$ref": "#/components/responses/Path" },
          "409": { "$ref": "#/components/responses/Error" },
          "413": { "$ref": "#/components/responses/Error" },
          "415": { "$ref": "#/components/responses/Refused" },
          "507": { "$ref": "#/components/responses/Error" }
        }
      },
      "delete": {
        "summary": "Delete a file, or a folder with its content",
        "responses": { "204": { "description": "Deleted" }, "404": { "$ref": "#/components/responses/Error" } }
      }
    },
    "/api/mkdir": {
      "post": {
        "summary": "Create a folder",
        "requestBody": { "required": true, "content": { "application/json": { "schema": { "type": "object", "required": ["path"], "properties": { "path": { "type": "string" } } } } } },
        "responses": { "201": { "$ref": "#/components/responses/Path" }, "409": { "$ref": "#/components/responses/Error" } }
      }
    },
    "/api/move": {
      "post": {
        "summary": "Rename or move",
        "requestBody": {
          "required": true,
          "content": { "application/json": { "schema": { "type": "object", "required": ["from", "to"], "properties": { "from": { "type": "string" }, "to": { "type": "string" }, "overwrite": { "type": "boolean", "default": false } } } } }
        },
        "responses": { "200": { "description": "Moved" }, "404": { "$ref": "#/components/responses/Error" }, "409": { "$ref": "#/components/responses/Error" } }
      }
    },
    "/api/zip": {
      "get": {
        "summary": "A folder as a streamed ZIP (ZIP64 for large content)",
        "parameters": [{ "name": "path", "in": "query", "required": false, "schema": { "type": "string" } }],
        "responses": { "200": { "description": "The archive", "content": { "application/zip": {} } }, "404": { "$ref": "#/components/responses/Error" } }
      }
    },
    "/api/events": {
      "get": {
        "summary": "Server-sent events: each data line is one event of events.md, with \"origin\" for changes made through the server",
        "responses": { "200": { "description": "The stream", "content": { "text/event-stream": {} } } }
      }
    },
    "/api/thumbnail/{path}": {
      "parameters": [{ "name": "path", "in": "path", "required": true, "schema": { "type": "string" } }],
      "get": {
        "summary": "A thumbnail of an image",
        "responses": { "200": { "description": "An image" }, "404": { "$ref": "#/components/responses/Error" }, "415": { "$ref": "#/components/responses/Error" } }
      }
    },
    "/api/uploads": {
      "post": {
        "summary": "Start a resumable upload",
        "parameters": [
          { "name": "path", "in": "query", "required": true, "schema": { "type": "string" } },
          { "name": "Upload-Length", "in": "header", "required": true, "schema": { "type": "integer" } }
        ],
        "responses": {
          "201": { "description": "Started", "content": { "application/json": { "schema": { "type": "object", "properties": { "upload": { "type": "string" }, "offset": { "type": "integer" } } } } } },
          "413": { "$ref": "#/components/responses/Error" },
          "415": { "$ref": "#/components/responses/Refused" },
          "507": { "$ref": "#/components/responses/Error" }
        }
      }
    },
    "/api/uploads/{token}": {
      "parameters": [{ "name": "token", "in": "path", "required": true, "schema": { "type": "string" } }],
      "patch": {
        "summary": "Append a chunk at Upload-Offset; the last chunk puts the file in place",
        "parameters": [{ "name": "Upload-Offset", "in": "header", "required": true, "schema": { "type": "integer" } }],
        "requestBody": { "content": { "application/offset+octet-stream": {} } },
        "responses": {
          "204": { "description": "Appended; Upload-Offset has the new offset" },
          "201": { "$ref": "#/components/responses/Path" },
          "200": { "$ref": "#/components/responses/Path" },
          "409": { "description": "Wrong offset; Upload-Offset has the server's" },
          "404": { "$ref": "#/components/responses/Error" },
          "415": { "$ref": "#/components/responses/Refused" }
        }
      },
      "head": { "summary": "Where to continue", "responses": { "204": { "description": "Upload-Offset and Upload-Length headers" }, "404": { "description": "No such upload" } } },
      "delete": { "summary": "Cancel; nothing is left behind", "responses": { "204": { "description": "Cancelled" }, "404": { "$ref": "#/components/responses/Error" } } }
    }
  },
  "components": {
    "securitySchemes": { "basic": { "type": "http", "scheme": "basic" } },
    "responses": {
      "Error": { "description": "What went wrong", "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Error" } } } },
      "Refused": { "description": "The file's type is not accepted (see acceptedTypes in /api/info); the error says why, such as \"the name of 'photo.jpg' says JPEG image, but the content is a PDF document, which this folder does not accept\". Nothing is left behind; a resumable upload is ended (a later chunk is 404). Checked on the first 64 KiB as they arrive when they already tell, and on the complete file before it is put in place", "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Error" } } } },
      "Path": { "description": "Done", "content": { "application/json": { "schema": { "type": "object", "properties": { "path": { "type": "string" } } } } } }
    },
    "schemas": {
      "Error": { "type": "object", "required": ["error"], "properties": { "error": { "type": "string" } } },
      "Info": {
        "type": "object",
        "properties": {
          "name": { "type": "string" },
          "readOnly": { "type": "boolean" },
          "maxUploadBytes": { "type": "integer" },
          "resumableChunkBytes": { "type": "integer" },
          "acceptedTypes": { "type": "array", "items": { "type": "string" }, "description": "The type identifiers uploads may be (every kind of them too, e.g. public.image accepts PNG and JPEG); absent when every type is accepted" }
        }
      },
      "Listing": {
        "type": "object",
        "required": ["path", "items"],
        "properties": { "path": { "type": "string" }, "items": { "type": "array", "items": { "$ref": "#/components/schemas/Item" } } }
      },
      "Item": {
        "type": "object",
        "required": ["name", "path", "kind", "size", "modified", "id"],
        "properties": {
          "name": { "type": "string" },
          "path": { "type": "string" },
          "kind": { "type": "string", "enum": ["file", "directory", "symlink", "other"] },
          "size": { "type": "integer" },
          "modified": { "type": "string", "format": "date-time" },
          "id": { "type": "string" },
          "childCount": { "type": "integer" },
          "writing": { "type": "boolean" }
        }
      }
    }
  }
}
"""#
}
