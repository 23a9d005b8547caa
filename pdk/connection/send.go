package connection

// Send is Do for a connector's API calls: it asks for JSON unless r's
// headers name another Accept, and returns an answer of status 2xx; any
// other answer becomes the error refuse makes of it (the provider's
// message under an error code such as not_found or rate_limited), or,
// when refuse returns nil, is returned as it is.
func Send(r Request, refuse func(Response) error) (Response, error) {
	h := map[string]string{"Accept": "application/json"}
	for k, v := range r.Headers {
		h[k] = v
	}
	r.Headers = h
	resp, err := Do(r)
	if err != nil {
		return Response{}, err
	}
	if resp.Status < 200 || resp.Status > 299 {
		// refuse may accept a status (Drive's 308 Resume Incomplete): the
		// answer then goes back whole, with its status and headers.
		if err := refuse(resp); err != nil {
			return Response{}, err
		}
	}
	return resp, nil
}
