#include "replay_file.hpp"

namespace vtice::replay {

Result<ReplayFile> open_replay(const std::string &path)
{
	auto data = trace::read_trace_file(path);
	if (!data)
		return data.error();
	auto recording = load_recording(*data);
	if (!recording && data->error)  // the damage cost the recording itself
		return make_error(path + ": " + data->error->message, data->error->offset);
	if (!recording)
		return make_error(path + ": " + recording.error().message, recording.error().offset);
	ReplayFile out;
	out.damage = data->error;
	out.replay = std::make_unique<Replay>(std::move(*recording));
	out.data = std::move(*data);
	out.data.replay.clear();  // parsed into the replay; no second copy
	return out;
}

}  // namespace vtice::replay
