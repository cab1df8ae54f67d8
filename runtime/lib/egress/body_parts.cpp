// SPDX-License-Identifier: Apache-2.0
#include "egress/body_parts.hpp"

#include <boost/asio/write.hpp>
#include <boost/beast/http/chunk_encode.hpp>

namespace cerberus::egress {

char* PartQueue::free_buffer()
{
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return stopped_ || filled_count_ - written_count_ < parts; });
    return stopped_ ? nullptr : buffers_[filled_count_ % parts].data();
}

void PartQueue::filled(const Part& part)
{
    {
        std::lock_guard lock(mutex_);
        read_[filled_count_ % parts] = part;
        ++filled_count_;
    }
    changed_.notify_all();
}

PartQueue::Part PartQueue::next()
{
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return filled_count_ > written_count_; });
    return read_[written_count_ % parts];
}

void PartQueue::written()
{
    {
        std::lock_guard lock(mutex_);
        ++written_count_;
    }
    changed_.notify_all();
}

void PartQueue::stop()
{
    {
        std::lock_guard lock(mutex_);
        stopped_ = true;
    }
    changed_.notify_all();
}

bool PartWriter::send(std::string_view bytes)
{
    boost::system::error_code ec;
    if (chunked_) {
        if (!bytes.empty()) // an empty chunk would end the body
            boost::asio::write(output_, boost::beast::http::make_chunk(boost::asio::buffer(bytes)), ec);
    } else {
        boost::asio::write(output_, boost::asio::buffer(bytes), ec);
    }
    return !ec;
}

bool PartWriter::write(std::string_view part)
{
    return send(scrub_ ? scrub_->feed(part) : part);
}

bool PartWriter::finish()
{
    if (scrub_ && !send(scrub_->finish()))
        return false;
    boost::system::error_code ec;
    if (chunked_)
        boost::asio::write(output_, boost::beast::http::make_chunk_last(), ec);
    return !ec;
}

} // namespace cerberus::egress
