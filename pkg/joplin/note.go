package joplin

// Note is a note as the Data API encodes it. A request's fields parameter
// says which fields Joplin fills; the others stay zero.
type Note struct {
	ID            string `json:"id"`
	ParentID      string `json:"parent_id"`
	Title         string `json:"title"`
	Body          string `json:"body"`
	IsTodo        int    `json:"is_todo"`
	TodoDue       int64  `json:"todo_due"`
	TodoCompleted int64  `json:"todo_completed"`
	CreatedTime   int64  `json:"created_time"`
	UpdatedTime   int64  `json:"updated_time"`
	// UserCreatedTime and UserUpdatedTime are the times a person sees
	// (kept across devices by the sync).
	UserCreatedTime int64 `json:"user_created_time"`
	UserUpdatedTime int64 `json:"user_updated_time"`
	DeletedTime     int64 `json:"deleted_time"`
	// IsConflict marks a conflict copy a sync made; ConflictOriginalID is
	// the note it conflicts with.
	IsConflict         int    `json:"is_conflict"`
	ConflictOriginalID string `json:"conflict_original_id"`
}
