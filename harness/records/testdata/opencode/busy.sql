PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE `message` (
          `id` text PRIMARY KEY,
          `session_id` text NOT NULL,
          `time_created` integer NOT NULL,
          `time_updated` integer NOT NULL,
          `data` text NOT NULL,
          CONSTRAINT `fk_message_session_id_session_id_fk` FOREIGN KEY (`session_id`) REFERENCES `session`(`id`) ON DELETE CASCADE
        );
INSERT INTO message VALUES('msg_2387f94860010NvXTfkA01JPZ1','ses_dc7806bd3ffenwsqve1NLdML2N',1796244214918,1796244218300,'{"role":"user","time":{"created":1796244214918},"agent":"build","model":{"providerID":"anthropic","modelID":"claude-sonnet-4-6"},"summary":{"diffs":[]}}');
INSERT INTO message VALUES('msg_2387f9499001YX0nrzEKFFYJwT','ses_dc7806bd3ffenwsqve1NLdML2N',1796244214937,1796244221969,'{"parentID":"msg_2387f94860010NvXTfkA01JPZ1","role":"assistant","mode":"build","agent":"build","path":{"cwd":"/tmp/opg/o2/wt","root":"/tmp/opg/o2/wt"},"cost":0,"tokens":{"input":0,"output":0,"reasoning":0,"cache":{"read":0,"write":0}},"modelID":"claude-sonnet-4-6","providerID":"anthropic","time":{"created":1796244214937,"completed":1796244221967},"error":{"name":"APIError","data":{"message":"fmctl stub model: no model is reachable from the test tier","statusCode":400,"isRetryable":false,"responseHeaders":{"content-length":"167","content-type":"application/json","date":"Wed, 02 Dec 2026 20:43:41 GMT"},"responseBody":"{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"code\":400,\"status\":\"INVALID_ARGUMENT\",\"message\":\"fmctl stub model: no model is reachable from the test tier\"}}","metadata":{"url":"http://127.0.0.1:46067/v1/messages"}}}}');
INSERT INTO message VALUES('msg_2387fcd1f001HYF9nMM7JqSex4','ses_dc7806bd3ffenwsqve1NLdML2N',1796244229407,1796244229583,'{"role":"user","time":{"created":1796244229407},"agent":"build","model":{"providerID":"anthropic","modelID":"claude-sonnet-4-6"},"summary":{"diffs":[]}}');
INSERT INTO message VALUES('msg_2387fcd47001evh4c8ACiRmeU2','ses_dc7806bd3ffenwsqve1NLdML2N',1796244229448,1796244229800,'{"parentID":"msg_2387fcd1f001HYF9nMM7JqSex4","role":"assistant","mode":"build","agent":"build","path":{"cwd":"/tmp/opg/o2/wt","root":"/tmp/opg/o2/wt"},"cost":0,"tokens":{"input":0,"output":0,"reasoning":0,"cache":{"read":0,"write":0}},"modelID":"claude-sonnet-4-6","providerID":"anthropic","time":{"created":1796244229448,"completed":1796244229799},"error":{"name":"APIError","data":{"message":"fmctl stub model: no model is reachable from the test tier","statusCode":400,"isRetryable":false,"responseHeaders":{"content-length":"167","content-type":"application/json","date":"Wed, 02 Dec 2026 20:43:49 GMT"},"responseBody":"{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"code\":400,\"status\":\"INVALID_ARGUMENT\",\"message\":\"fmctl stub model: no model is reachable from the test tier\"}}","metadata":{"url":"http://127.0.0.1:46067/v1/messages"}}}}');
INSERT INTO message VALUES('msg_2387fd70600174YF93RTO63Wfp','ses_dc7806bd3ffenwsqve1NLdML2N',1796244231942,1796244232058,'{"role":"user","time":{"created":1796244231942},"agent":"build","model":{"providerID":"anthropic","modelID":"claude-sonnet-4-6"},"summary":{"diffs":[]}}');
INSERT INTO message VALUES('msg_2387fd718001rjf1IZNsfcbeZL','ses_dc7806bd3ffenwsqve1NLdML2N',1796244231960,1796244232284,'{"parentID":"msg_2387fd70600174YF93RTO63Wfp","role":"assistant","mode":"build","agent":"build","path":{"cwd":"/tmp/opg/o2/wt","root":"/tmp/opg/o2/wt"},"cost":0,"tokens":{"input":0,"output":0,"reasoning":0,"cache":{"read":0,"write":0}},"modelID":"claude-sonnet-4-6","providerID":"anthropic","time":{"created":1796244231960,"completed":1796244232282},"error":{"name":"APIError","data":{"message":"fmctl stub model: no model is reachable from the test tier","statusCode":400,"isRetryable":false,"responseHeaders":{"content-length":"167","content-type":"application/json","date":"Wed, 02 Dec 2026 20:43:52 GMT"},"responseBody":"{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"code\":400,\"status\":\"INVALID_ARGUMENT\",\"message\":\"fmctl stub model: no model is reachable from the test tier\"}}","metadata":{"url":"http://127.0.0.1:46067/v1/messages"}}}}');
INSERT INTO message VALUES('msg_2387fedf100171FOCFioSKZBKG','ses_dc7806bd3ffenwsqve1NLdML2N',1796244237809,1796244238069,'{"role":"user","time":{"created":1796244237809},"agent":"build","model":{"providerID":"anthropic","modelID":"claude-sonnet-4-6"},"summary":{"diffs":[]}}');
INSERT INTO message VALUES('msg_2387fee220019KWWZWTKu95rBn','ses_dc7806bd3ffenwsqve1NLdML2N',1796244237861,1796244238247,'{"parentID":"msg_2387fedf100171FOCFioSKZBKG","role":"assistant","mode":"build","agent":"build","path":{"cwd":"/tmp/opg/o2/wt","root":"/tmp/opg/o2/wt"},"cost":0,"tokens":{"input":0,"output":0,"reasoning":0,"cache":{"read":0,"write":0}},"modelID":"claude-sonnet-4-6","providerID":"anthropic","time":{"created":1796244237861,"completed":1796244238245},"error":{"name":"APIError","data":{"message":"fmctl stub model: no model is reachable from the test tier","statusCode":400,"isRetryable":false,"responseHeaders":{"content-length":"167","content-type":"application/json","date":"Wed, 02 Dec 2026 20:43:58 GMT"},"responseBody":"{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"code\":400,\"status\":\"INVALID_ARGUMENT\",\"message\":\"fmctl stub model: no model is reachable from the test tier\"}}","metadata":{"url":"http://127.0.0.1:46067/v1/messages"}}}}');
INSERT INTO message VALUES('msg_2387ff7db001XkXjF2iP2Y4bvd','ses_dc7806bd3ffenwsqve1NLdML2N',1796244240349,1796244240575,'{"role":"user","time":{"created":1796244240349},"agent":"build","model":{"providerID":"anthropic","modelID":"claude-sonnet-4-6"},"summary":{"diffs":[]}}');
INSERT INTO message VALUES('msg_2387ff7fb0014jhgImToakLE0e','ses_dc7806bd3ffenwsqve1NLdML2N',1796244240379,1796244240850,'{"parentID":"msg_2387ff7db001XkXjF2iP2Y4bvd","role":"assistant","mode":"build","agent":"build","path":{"cwd":"/tmp/opg/o2/wt","root":"/tmp/opg/o2/wt"},"cost":0,"tokens":{"input":0,"output":0,"reasoning":0,"cache":{"read":0,"write":0}},"modelID":"claude-sonnet-4-6","providerID":"anthropic","time":{"created":1796244240379,"completed":1796244240843},"error":{"name":"APIError","data":{"message":"fmctl stub model: no model is reachable from the test tier","statusCode":400,"isRetryable":false,"responseHeaders":{"content-length":"167","content-type":"application/json","date":"Wed, 02 Dec 2026 20:44:00 GMT"},"responseBody":"{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"code\":400,\"status\":\"INVALID_ARGUMENT\",\"message\":\"fmctl stub model: no model is reachable from the test tier\"}}","metadata":{"url":"http://127.0.0.1:46067/v1/messages"}}}}');
INSERT INTO message VALUES('msg_238802a63001qVYYOerVZowYFy','ses_dc7806bd3ffenwsqve1NLdML2N',1796244253283,1796244254087,'{"role":"user","time":{"created":1796244253283},"agent":"build","model":{"providerID":"anthropic","modelID":"claude-sonnet-4-6"},"summary":{"diffs":[]}}');
INSERT INTO message VALUES('msg_238802b100013X3w2EfTAyPJ6G','ses_dc7806bd3ffenwsqve1NLdML2N',1796244253456,1796244254724,'{"parentID":"msg_238802a63001qVYYOerVZowYFy","role":"assistant","mode":"build","agent":"build","path":{"cwd":"/tmp/opg/o2/wt","root":"/tmp/opg/o2/wt"},"cost":0,"tokens":{"input":0,"output":0,"reasoning":0,"cache":{"read":0,"write":0}},"modelID":"claude-sonnet-4-6","providerID":"anthropic","time":{"created":1796244253456,"completed":1796244254721},"error":{"name":"APIError","data":{"message":"fmctl stub model: no model is reachable from the test tier","statusCode":400,"isRetryable":false,"responseHeaders":{"content-length":"167","content-type":"application/json","date":"Wed, 02 Dec 2026 20:44:14 GMT"},"responseBody":"{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"code\":400,\"status\":\"INVALID_ARGUMENT\",\"message\":\"fmctl stub model: no model is reachable from the test tier\"}}","metadata":{"url":"http://127.0.0.1:46067/v1/messages"}}}}');
INSERT INTO message VALUES('msg_238808c36001s2HaDQZMCp48eJ','ses_dc7806bd3ffenwsqve1NLdML2N',1796244278326,1796244278455,'{"role":"user","time":{"created":1796244278326},"agent":"build","model":{"providerID":"anthropic","modelID":"claude-sonnet-4-6"},"summary":{"diffs":[]}}');
INSERT INTO message VALUES('msg_238808c4e001Mtb25xJyOgitC6','ses_dc7806bd3ffenwsqve1NLdML2N',1796244278351,1796244278351,'{"parentID":"msg_238808c36001s2HaDQZMCp48eJ","role":"assistant","mode":"build","agent":"build","path":{"cwd":"/tmp/opg/o2/wt","root":"/tmp/opg/o2/wt"},"cost":0,"tokens":{"input":0,"output":0,"reasoning":0,"cache":{"read":0,"write":0}},"modelID":"claude-sonnet-4-6","providerID":"anthropic","time":{"created":1796244278351}}');
CREATE TABLE `part` (
          `id` text PRIMARY KEY,
          `message_id` text NOT NULL,
          `session_id` text NOT NULL,
          `time_created` integer NOT NULL,
          `time_updated` integer NOT NULL,
          `data` text NOT NULL,
          CONSTRAINT `fk_part_message_id_message_id_fk` FOREIGN KEY (`message_id`) REFERENCES `message`(`id`) ON DELETE CASCADE
        );
INSERT INTO part VALUES('prt_2387f94880015VHyTWn2prWa2T','msg_2387f94860010NvXTfkA01JPZ1','ses_dc7806bd3ffenwsqve1NLdML2N',1796244214926,1796244214927,'{"type":"text","text":"Read the brief at /x/brief.md and follow it exactly."}');
INSERT INTO part VALUES('prt_2387fcd20001RsHugihkTMJuFJ','msg_2387fcd1f001HYF9nMM7JqSex4','ses_dc7806bd3ffenwsqve1NLdML2N',1796244229416,1796244229423,'{"type":"text","text":"hello one"}');
INSERT INTO part VALUES('prt_2387fd708001UVOEV03Axuqtdd','msg_2387fd70600174YF93RTO63Wfp','ses_dc7806bd3ffenwsqve1NLdML2N',1796244231947,1796244231947,'{"type":"text","text":"line one\nline two\n  indented three "}');
INSERT INTO part VALUES('prt_2387fedf2001vi98Pmy4OiZLk6','msg_2387fedf100171FOCFioSKZBKG','ses_dc7806bd3ffenwsqve1NLdML2N',1796244237813,1796244237824,'{"type":"text","text":"pasted single"}');
INSERT INTO part VALUES('prt_2387ff7e0001SazQ763URhRrNH','msg_2387ff7db001XkXjF2iP2Y4bvd','ses_dc7806bd3ffenwsqve1NLdML2N',1796244240362,1796244240363,'{"type":"text","text":"pasted two"}');
INSERT INTO part VALUES('prt_238802a710015iFRgWHvLXd3B4','msg_238802a63001qVYYOerVZowYFy','ses_dc7806bd3ffenwsqve1NLdML2N',1796244253330,1796244253332,'{"type":"text","text":"abc"}');
INSERT INTO part VALUES('prt_238808c37001mdlKFR6zVxNujf','msg_238808c36001s2HaDQZMCp48eJ','ses_dc7806bd3ffenwsqve1NLdML2N',1796244278337,1796244278338,'{"type":"text","text":"please fmhang now"}');
CREATE TABLE `session` (
          `id` text PRIMARY KEY,
          `project_id` text NOT NULL,
          `workspace_id` text,
          `parent_id` text,
          `slug` text NOT NULL,
          `directory` text NOT NULL,
          `path` text,
          `title` text NOT NULL,
          `version` text NOT NULL,
          `share_url` text,
          `summary_additions` integer,
          `summary_deletions` integer,
          `summary_files` integer,
          `summary_diffs` text,
          `metadata` text,
          `cost` real DEFAULT 0 NOT NULL,
          `tokens_input` integer DEFAULT 0 NOT NULL,
          `tokens_output` integer DEFAULT 0 NOT NULL,
          `tokens_reasoning` integer DEFAULT 0 NOT NULL,
          `tokens_cache_read` integer DEFAULT 0 NOT NULL,
          `tokens_cache_write` integer DEFAULT 0 NOT NULL,
          `revert` text,
          `permission` text,
          `agent` text,
          `model` text,
          `time_created` integer NOT NULL,
          `time_updated` integer NOT NULL,
          `time_compacting` integer,
          `time_archived` integer,
          CONSTRAINT `fk_session_project_id_project_id_fk` FOREIGN KEY (`project_id`) REFERENCES `project`(`id`) ON DELETE CASCADE
        );
INSERT INTO session VALUES('ses_dc7806bd3ffenwsqve1NLdML2N','global',NULL,NULL,'crisp-panda','/tmp/opg/o2/wt','','New session - 2026-12-02T20:43:34.829Z','1.18.33',NULL,0,0,0,NULL,NULL,0.0,0,0,0,0,0,NULL,NULL,'build','{"id":"claude-sonnet-4-6","providerID":"anthropic"}',1796244214829,1796244278445,NULL,NULL);
COMMIT;
