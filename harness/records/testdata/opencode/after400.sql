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
INSERT INTO session VALUES('ses_dc7806bd3ffenwsqve1NLdML2N','global',NULL,NULL,'crisp-panda','/tmp/opg/o2/wt','','New session - 2026-12-02T20:43:34.829Z','1.18.33',NULL,0,0,0,NULL,NULL,0.0,0,0,0,0,0,NULL,NULL,'build','{"id":"claude-sonnet-4-6","providerID":"anthropic"}',1796244214829,1796244229572,NULL,NULL);
COMMIT;
