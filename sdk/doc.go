// Package sdk is the Go client of agenthost's HTTP API.
//
// The methods of [Client] are generated from the server's OpenAPI document
// (host/api/openapi.json, served at /api/v1/openapi.json), one per
// operation and named by its operationId, with a struct per schema; a test
// fails when the committed client differs from what the document yields.
// After a change to the API, regenerate with
//
//	go generate ./sdk/...
//
// Every method takes a context first. An answer with a status of 400 or
// above is an [*Error] carrying the problem document (RFC 9457). Uploads are
// streamed. [Client.Events] follows a workflow's event stream and resumes
// after a dropped connection with Last-Event-ID, so no event is lost or
// repeated.
//
//	c, err := sdk.New("http://127.0.0.1:8080", sdk.WithToken(os.Getenv("AGENTHOST_TOKEN")))
//	f, _ := os.Open("report.pdf")
//	up, err := c.UploadFile(ctx, ws, sdk.UploadFileRequest{File: f, FileName: "report.pdf", Tags: "finance"})
//	wf, err := c.StartWorkflow(ctx, ws, sdk.StartRequest{Prompt: "Summarise report.pdf", FileIDs: []string{up.ID}})
//	events := c.Events(ctx, wf.ID, 0)
//	defer events.Close()
//	for {
//		ev, err := events.Next()
//		if err != nil {
//			return err
//		}
//		if chunk, ok := ev.Payload.(*sdk.ChunkData); ok {
//			fmt.Print(chunk.Text)
//		}
//		if ev.Type.Terminal() {
//			break
//		}
//	}
//
// The package imports nothing of the server: it shares the API's types
// only through the generated code.
package sdk

//go:generate go run ./internal/gen/cmd -spec ../host/api/openapi.json -out .
